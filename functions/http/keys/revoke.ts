// DELETE /api/keys/{id}
import { route } from '../../routes.ts';
import { http } from '../../../shared/http/handler.ts';
import { noContent } from '../../../shared/http/responses.ts';
import { revokeKey } from '../../../shared/domain/keys.ts';

export const handler = http(route('DELETE /api/keys/{id}'), async ({ principal, params }) => {
  await revokeKey(principal, params.id);
  return noContent();
});
