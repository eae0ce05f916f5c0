// GET /console/schedules/new: the empty "Create schedule" form, its workflow chosen when `workflowId` names one of the account's.
import { route } from './new.route.ts';
import { consoleHttp } from '../../../../shared/console/console-http.tsx';
import { scheduleWorkflows } from './drafts.ts';
import { emptyDraft, scheduleFormPage } from './form-view.tsx';
import { noErrors } from '../parts/labelled-field.tsx';

export const handler = consoleHttp(route, async ({ session, query }) => {
  const workflows = await scheduleWorkflows(session);
  const chosen = workflows.some((w) => w.workflowId === query.workflowId) ? query.workflowId : undefined;
  return scheduleFormPage(session, { draft: emptyDraft(chosen), workflows, errors: noErrors, preview: undefined });
});
