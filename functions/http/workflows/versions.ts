// GET /api/workflows/{id}/versions
import { route } from './versions.route.ts';
import { http } from '../../../shared/http/handler.ts';
import { ok } from '../../../shared/http/responses.ts';
import { pageWorkflowVersions } from '../../../shared/domain/workflow-versions.ts';

export const handler = http(route, async ({ principal, params, query }) => {
  const { items, nextCursor } = await pageWorkflowVersions(principal, params.id, query.limit, query.cursor);
  return ok({ items, nextCursor });
});
