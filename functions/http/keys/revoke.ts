// DELETE /api/keys/{id}
import { route } from './revoke.route.ts';
import { http } from '../../../shared/http/handler.ts';
import { noContent } from '../../../shared/http/responses.ts';
import { revokeKey } from '../../../shared/domain/keys.ts';

export const handler = http(route, async ({ principal, params }) => {
  await revokeKey(principal, params.id);
  return noContent();
});
