// POST /api/secrets (admins)
import { route } from './create.route.ts';
import { http } from '../../../shared/http/handler.ts';
import { created } from '../../../shared/http/responses.ts';
import { createSecret } from '../../../shared/domain/account-secrets.ts';

export const handler = http(route, async ({ principal, body }) => {
  const secret = await createSecret(principal, body);
  return created(secret, `/api/secrets/${secret.name}`);
});
