// GET /api/webhooks/{id}/stats
import { route } from './stats.route.ts';
import { http } from '../../../shared/http/handler.ts';
import { ok } from '../../../shared/http/responses.ts';
import { webhookStats } from '../../../shared/domain/webhooks.ts';

export const handler = http(route, async ({ principal, params }) => ok(await webhookStats(principal, params.id)));
