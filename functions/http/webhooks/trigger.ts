// POST /api/webhooks/{webhookId}/trigger (and the legacy POST /api/webhook-trigger/{webhookId})
import { route } from '../../routes.ts';
import { http } from '../../../shared/http/handler.ts';
import { json } from '../../../shared/http/responses.ts';
import { idempotencyKey } from '../../../shared/http/idempotency.ts';
import { deliveryId, handshake } from '../../../shared/http/webhook-senders.ts';
import { startTriggeredRun } from '../../../shared/domain/trigger.ts';

// Past `webhook-auth` (404 → 401 → 403 → 409 → 429) and the body checks (415 → 400).
export const handler = http(route('POST /api/webhooks/{webhookId}/trigger'), async ({ event, body, principal, request }) => {
  const { webhook, keyId } = principal;
  const answer = handshake(webhook, event.headers, body);
  if (answer) return json(200, answer);
  const { result, replayed } = await startTriggeredRun({
    webhook,
    keyId,
    sourceIp: request.sourceIp,
    payload: body,
    idempotencyKey: idempotencyKey(event),
    deliveryId: deliveryId(webhook, event.headers, body),
  });
  return json(200, result, replayed ? { 'idempotent-replayed': 'true' } : {});
});
