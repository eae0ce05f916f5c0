// POST /api/v1/workflows/{workflowId}/runs
import { route } from './start-run.route.ts';
import { http } from '../../../../shared/http/handler.ts';
import { json } from '../../../../shared/http/responses.ts';
import { idempotencyKey } from '../../../../shared/http/idempotency.ts';
import { requireWorkflow } from '../../../../shared/domain/workflow-access.ts';
import { executionView } from '../../../../shared/domain/executions.ts';
import { startRun } from '../../../../shared/engine/runs.ts';
import { idempotencyScope } from '../../../../shared/db/entities/idempotency.ts';

export const handler = http(route, async ({ principal, params, body, event }) => {
  const key = idempotencyKey(event);
  const workflow = await requireWorkflow(principal.accountId, params.workflowId);
  const { execution, replayed } = await startRun({
    workflow,
    trigger: 'api',
    variables: body.variables,
    startedBy: principal.userId,
    idempotency: key ? { scope: idempotencyScope.workflowStart(workflow.workflowId), key, request: body } : undefined,
    extra: { keyId: principal.keyId },
  });
  return json(202, executionView(execution), {
    location: `/api/v1/executions/${execution.executionId}`,
    ...(replayed ? { 'idempotent-replayed': 'true' } : {}),
  });
});
