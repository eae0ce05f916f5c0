// POST /api/v1/workflows/{workflowId}/runs
import { route } from './start-run.route.ts';
import { http } from '../../../../shared/http/handler.ts';
import { json } from '../../../../shared/http/responses.ts';
import { idempotencyKey } from '../../../../shared/http/idempotency.ts';
import { executionView } from '../../../../shared/domain/executions.ts';
import { startWorkflowRun } from '../../../../shared/domain/run-start.ts';

export const handler = http(route, async ({ principal, params, body, event }) => {
  const key = idempotencyKey(event);
  const { execution, replayed } = await startWorkflowRun(principal, params.workflowId, body.variables, { key });
  return json(202, executionView(execution), {
    location: `/api/v1/executions/${execution.executionId}`,
    ...(replayed ? { 'idempotent-replayed': 'true' } : {}),
  });
});
