// POST /api/v1/executions/{executionId}/rerun
import { route } from './rerun.route.ts';
import { http } from '../../../../shared/http/handler.ts';
import { json } from '../../../../shared/http/responses.ts';
import { executionView } from '../../../../shared/domain/executions.ts';
import { rerunRun } from '../../../../shared/engine/rerun.ts';

export const handler = http(route, async ({ principal, params }) => {
  const { execution } = await rerunRun(principal.accountId, params.executionId, principal);
  return json(202, executionView(execution), { location: `/api/v1/executions/${execution.executionId}` });
});
