// DELETE /api/secrets/{name} (admins)
import { route } from '../../routes.ts';
import { http } from '../../../shared/http/handler.ts';
import { noContent } from '../../../shared/http/responses.ts';
import { removeSecret } from '../../../shared/domain/account-secrets.ts';

export const handler = http(route('DELETE /api/secrets/{name}'), async ({ principal, params }) => {
  await removeSecret(principal, params.name);
  return noContent();
});
