// GET /api/v1/executions/{executionId}/deliveries
import { route } from './deliveries.route.ts';
import { http } from '../../../../shared/http/handler.ts';
import { ok } from '../../../../shared/http/responses.ts';
import { pageExecutionDeliveries } from '../../../../shared/domain/deliveries.ts';

export const handler = http(route, async ({ principal, params, query }) =>
  ok(await pageExecutionDeliveries(principal.accountId, params.executionId, query.limit, query.cursor)),
);
