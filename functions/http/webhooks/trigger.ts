// POST /api/webhooks/{webhookId}/trigger (and the legacy POST /api/webhook-trigger/{webhookId})
import { route } from './trigger.route.ts';
import { http, type Input } from '../../../shared/http/handler.ts';
import { json } from '../../../shared/http/responses.ts';
import { type TriggerState, triggerWebhook } from '../../../shared/domain/trigger.ts';

/** The trigger, for both its paths; each is its own function, with its own route's settings. */
export const respond = async ({ event, params, request }: Input<Pick<typeof route, 'auth' | 'params'>>) => {
  const state: TriggerState = {};
  try {
    const { result, replayed } = await triggerWebhook({ event, webhookId: params.webhookId, sourceIp: request.sourceIp }, state);
    return json(200, result, replayed ? { 'idempotent-replayed': 'true' } : {});
  } finally {
    Object.assign(request.responseHeaders, state.rateLimitHeaders);
  }
};

export const handler = http(route, respond);
