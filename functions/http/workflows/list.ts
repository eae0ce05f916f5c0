// GET /api/workflows
import { route } from './list.route.ts';
import { http } from '../../../shared/http/handler.ts';
import { ok } from '../../../shared/http/responses.ts';
import { pageWorkflows, workflowView } from '../../../shared/domain/workflows.ts';

export const handler = http(route, async ({ principal, query }) => {
  const page = await pageWorkflows(principal.accountId, query.limit, query.cursor);
  return ok({ items: page.items.map(workflowView), nextCursor: page.nextCursor });
});
