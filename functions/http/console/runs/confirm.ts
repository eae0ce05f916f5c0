// GET /console/runs/{executionId}/{action}: the confirmation of "Cancel run", "Retry", "Rerun" or
// "Resume" (changes nothing); 409 as a page when the run does not allow it now.
import { route } from './confirm.route.ts';
import { consoleHttp } from '../../../../shared/console/console-http.tsx';
import { requireExecution } from '../../../../shared/domain/executions.ts';
import { actionRefusal } from './action-rules.ts';
import { confirmPage } from './confirm-view.tsx';

export const handler = consoleHttp(route, async ({ session, params }) => {
  const e = await requireExecution(session.principal.accountId, params.executionId);
  const refusal = actionRefusal(params.action, e);
  if (refusal) throw refusal;
  return confirmPage(session, e, params.action);
});
