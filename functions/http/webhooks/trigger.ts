// POST /api/webhooks/{webhookId}/trigger (and the legacy POST /api/webhook-trigger/{webhookId})
import { route } from './trigger.route.ts';
import { type Input, webhookHttp } from '../../../shared/http/handler.ts';
import { json } from '../../../shared/http/responses.ts';
import { idempotencyKey } from '../../../shared/http/idempotency.ts';
import { deliveryId, handshake, sendsDeliveryIds } from '../../../shared/http/webhook-senders.ts';
import { startTriggeredRun } from '../../../shared/domain/trigger.ts';

// Past `webhook-auth` (404 → 401 → 403 → 409 → 429) and the body checks (415 → 400).
/** The trigger, for both its paths; each is its own function, with its own route's settings. */
export const respond = async ({ event, body, principal, request }: Input<Pick<typeof route, 'auth' | 'params' | 'body'>>) => {
  const { webhook, keyId } = principal;
  const answer = handshake(webhook, event.headers, body);
  if (answer) return json(200, answer);
  const { result, replayed } = await startTriggeredRun({
    webhook,
    keyId,
    sourceIp: request.sourceIp,
    payload: body,
    // A sender's signed delivery id is the only dedupe key of its scheme: the unsigned header is ignored.
    idempotencyKey: sendsDeliveryIds(webhook) ? undefined : idempotencyKey(event),
    deliveryId: deliveryId(webhook, event.headers, body),
    headers: event.headers,
    // Counted by the rate limit (webhook-auth): the run's lane (shared/engine/lanes.ts).
    accountRequests: request.trigger?.accountRequests,
  });
  return json(200, result, replayed ? { 'idempotent-replayed': 'true' } : {});
};

export const handler = webhookHttp(route, respond);
