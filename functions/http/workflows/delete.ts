// DELETE /api/workflows/{id}
import { route } from './delete.route.ts';
import { http } from '../../../shared/http/handler.ts';
import { noContent } from '../../../shared/http/responses.ts';
import { removeWorkflow } from '../../../shared/domain/workflows.ts';

export const handler = http(route, async ({ principal, params }) => {
  await removeWorkflow(principal, params.id);
  return noContent();
});
