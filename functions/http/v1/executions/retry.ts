// POST /api/v1/executions/{executionId}/retry
import { route } from './retry.route.ts';
import { http } from '../../../../shared/http/handler.ts';
import { json } from '../../../../shared/http/responses.ts';
import { idempotencyKey } from '../../../../shared/http/idempotency.ts';
import { executionView } from '../../../../shared/domain/executions.ts';
import { retryRun } from '../../../../shared/engine/retry-failed-run.ts';

export const handler = http(route, async ({ principal, params, event }) => {
  const key = idempotencyKey(event);
  const { execution, replayed } = await retryRun(principal.accountId, params.executionId, principal, key ? { key } : undefined);
  return json(202, executionView(execution), {
    location: `/api/v1/executions/${execution.executionId}`,
    ...(replayed ? { 'idempotent-replayed': 'true' } : {}),
  });
});
