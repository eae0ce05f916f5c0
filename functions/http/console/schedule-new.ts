// GET /console/schedules/new: the empty "Create schedule" form, its workflow chosen when `workflowId` names one of the account's.
import { route } from './schedule-new.route.ts';
import { consoleHttp } from '../../../shared/console/console-http.tsx';
import { scheduleWorkflows } from './schedule-drafts.ts';
import { emptyDraft, scheduleFormPage } from './schedule-form-view.tsx';
import { noErrors } from './labelled-field.tsx';

export const handler = consoleHttp(route, async ({ session, query }) => {
  const workflows = await scheduleWorkflows(session);
  const chosen = workflows.some((w) => w.workflowId === query.workflowId) ? query.workflowId : undefined;
  return scheduleFormPage(session, { draft: emptyDraft(chosen), workflows, errors: noErrors, preview: undefined });
});
