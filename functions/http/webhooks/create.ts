// POST /api/webhooks
import { route } from './create.route.ts';
import { http } from '../../../shared/http/handler.ts';
import { created } from '../../../shared/http/responses.ts';
import { createWebhook, webhookView } from '../../../shared/domain/webhooks.ts';

export const handler = http(route, async ({ principal, body }) => {
  const w = await createWebhook(principal, body);
  return created(webhookView(w), `/api/webhooks/${w.webhookId}`);
});
