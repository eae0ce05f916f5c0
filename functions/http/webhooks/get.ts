// GET /api/webhooks/{id}
import { route } from './get.route.ts';
import { http } from '../../../shared/http/handler.ts';
import { ok } from '../../../shared/http/responses.ts';
import { webhookDetail } from '../../../shared/domain/webhooks.ts';

export const handler = http(route, async ({ principal, params }) => ok(await webhookDetail(principal, params.id)));
