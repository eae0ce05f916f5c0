// GET /api/webhooks/{id}/requests/{requestId}
import { route } from './request.route.ts';
import { http } from '../../../shared/http/handler.ts';
import { ok } from '../../../shared/http/responses.ts';
import { inboundRequest } from '../../../shared/domain/inbound-log.ts';

export const handler = http(route, async ({ principal, params }) => ok(await inboundRequest(principal, params.id, params.requestId)));
