// PUT /api/webhooks/{id}
import { route } from './update.route.ts';
import { http } from '../../../shared/http/handler.ts';
import { ok } from '../../../shared/http/responses.ts';
import { updateWebhook, webhookView } from '../../../shared/domain/webhooks.ts';

export const handler = http(route, async ({ principal, params, body }) => ok(webhookView(await updateWebhook(principal, params.id, body))));
