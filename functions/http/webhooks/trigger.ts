// POST /api/webhooks/{webhookId}/trigger (and the legacy POST /api/webhook-trigger/{webhookId})
import { route } from './trigger.route.ts';
import { http } from '../../../shared/http/handler.ts';
import { json } from '../../../shared/http/responses.ts';
import { type TriggerState, triggerWebhook } from '../../../shared/domain/trigger.ts';

export const handler = http(route, async ({ event, params, request }) => {
  const state: TriggerState = {};
  try {
    const { result, replayed } = await triggerWebhook({ event, webhookId: params.webhookId, sourceIp: request.sourceIp }, state);
    return json(200, result, replayed ? { 'idempotent-replayed': 'true' } : {});
  } finally {
    Object.assign(request.responseHeaders, state.rateLimitHeaders);
  }
});
