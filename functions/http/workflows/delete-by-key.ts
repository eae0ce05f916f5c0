// DELETE /api/workflow-keys/{key}
import { route } from './delete-by-key.route.ts';
import { http } from '../../../shared/http/handler.ts';
import { noContent } from '../../../shared/http/responses.ts';
import { removeWorkflowByKey, viaCli as cli } from '../../../shared/domain/workflow-code.ts';

export const handler = http(route, async ({ principal, params }) => {
  await removeWorkflowByKey(cli(principal), params.key);
  return noContent();
});
