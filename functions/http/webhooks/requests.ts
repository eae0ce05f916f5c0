// GET /api/webhooks/{id}/requests
import { route } from './requests.route.ts';
import { http } from '../../../shared/http/handler.ts';
import { ok } from '../../../shared/http/responses.ts';
import { inboundPage } from '../../../shared/domain/inbound-log.ts';

export const handler = http(route, async ({ principal, params, query }) =>
  ok(await inboundPage(principal, params.id, query.limit, query.cursor)),
);
