// GET /api/v1/executions
import { route } from './list.route.ts';
import { http } from '../../../../shared/http/handler.ts';
import { ok } from '../../../../shared/http/responses.ts';
import { pageExecutions } from '../../../../shared/domain/executions.ts';

export const handler = http(route, async ({ principal, query }) => {
  const { limit, cursor, ...filters } = query;
  return ok(await pageExecutions(principal.accountId, filters, limit, cursor));
});
