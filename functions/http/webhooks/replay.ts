// POST /api/webhooks/{id}/requests/{requestId}/replay
import { route } from './replay.route.ts';
import { http } from '../../../shared/http/handler.ts';
import { json } from '../../../shared/http/responses.ts';
import { idempotencyKey } from '../../../shared/http/idempotency.ts';
import { replayRequest } from '../../../shared/domain/inbound-replay.ts';

export const handler = http(route, async ({ principal, params, event }) => {
  const { result, replayed } = await replayRequest(principal, params.id, params.requestId, idempotencyKey(event));
  return json(202, result, {
    location: `/api/v1/executions/${result.executionId}`,
    ...(replayed ? { 'idempotent-replayed': 'true' } : {}),
  });
});
