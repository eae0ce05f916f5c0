// GET /api/webhooks
import { route } from './list.route.ts';
import { http } from '../../../shared/http/handler.ts';
import { ok } from '../../../shared/http/responses.ts';
import { listVisibleWebhooks } from '../../../shared/domain/webhooks.ts';

export const handler = http(route, async ({ principal }) => ok(await listVisibleWebhooks(principal)));
