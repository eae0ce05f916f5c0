// POST /console/schedules/new: "Preview" re-shows the form as typed with the next five fire times (or
// the fields' errors); "Create schedule" creates it as the API does, or re-shows it with each error at
// its field (nothing created), then back to the list.
import { route } from './create.route.ts';
import { consoleHttp } from '../../../../shared/console/console-http.tsx';
import { seeOther } from '../../../../shared/console/render.tsx';
import { createSchedule } from '../../../../shared/domain/schedules.ts';
import { CreateScheduleBody } from '../../../../shared/schemas/schedules.ts';
import { HTTP_STATUS } from '../../../../shared/http-status.ts';
import { draftOf, draftToBody, previewOf, scheduleWorkflows } from './drafts.ts';
import { SCHEDULE_FIELDS, scheduleFormPage } from './form-view.tsx';
import { byField, errorsOf, isRefusal } from '../parts/labelled-field.tsx';

export const handler = consoleHttp(route, async ({ session, form }) => {
  const draft = draftOf(form);
  const workflows = await scheduleWorkflows(session);
  const show = (status: number, errors = byField([], SCHEDULE_FIELDS), preview?: ReturnType<typeof previewOf>) =>
    scheduleFormPage(session, { draft, workflows, errors, preview, status });
  if (form.get('intent') === 'preview') {
    const preview = previewOf(draft);
    return show(preview.ok ? 200 : 400, preview.ok ? undefined : byField(preview.errors, SCHEDULE_FIELDS), preview);
  }
  const converted = draftToBody(draft);
  // The settings' own rules first (the expression, the zone, the times: as the preview reads them), then the API's body.
  const preview = previewOf(draft);
  const errors = [...(preview.ok ? [] : preview.errors), ...(converted.ok ? [] : converted.errors)].filter(
    (e, i, all) => all.findIndex((o) => o.path === e.path) === i,
  );
  if (!draft.workflowId) errors.push({ path: 'workflowId', message: 'choose the workflow the schedule starts' });
  const parsed = CreateScheduleBody.safeParse(converted.body);
  if (!parsed.success) errors.push(...parsed.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message })));
  if (errors.length || !parsed.success) return show(400, byField(errors, SCHEDULE_FIELDS));
  try {
    await createSchedule(session.principal, draft.workflowId, parsed.data);
  } catch (e) {
    if (!isRefusal(e)) throw e;
    const shown = errorsOf(e, SCHEDULE_FIELDS);
    if (e.code === 'WORKFLOW_NOT_FOUND') shown.fields.workflowId = 'no such workflow in this account';
    return show(HTTP_STATUS[e.kind], e.code === 'WORKFLOW_NOT_FOUND' ? { fields: shown.fields, form: [] } : shown);
  }
  return seeOther('/console/schedules');
});
