// GET /api/v1/executions/{executionId}/events
import { route } from './events.route.ts';
import { http } from '../../../../shared/http/handler.ts';
import { ok } from '../../../../shared/http/responses.ts';
import { pageEvents } from '../../../../shared/domain/executions.ts';

export const handler = http(route, async ({ principal, params, query }) =>
  ok(await pageEvents(principal.accountId, params.executionId, query.limit, query.cursor)),
);
