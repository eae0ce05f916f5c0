// DELETE /api/secrets/{name} (admins)
import { route } from './delete.route.ts';
import { http } from '../../../shared/http/handler.ts';
import { noContent } from '../../../shared/http/responses.ts';
import { removeSecret } from '../../../shared/domain/account-secrets.ts';

export const handler = http(route, async ({ principal, params }) => {
  await removeSecret(principal, params.name);
  return noContent();
});
