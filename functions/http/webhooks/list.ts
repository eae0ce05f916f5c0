// GET /api/webhooks
import { route } from '../../routes.ts';
import { http } from '../../../shared/http/handler.ts';
import { ok } from '../../../shared/http/responses.ts';
import { listVisibleWebhooks } from '../../../shared/domain/webhooks.ts';

export const handler = http(route('GET /api/webhooks'), async ({ principal }) => ok(await listVisibleWebhooks(principal)));
