// PUT /api/secrets/{name} (admins)
import { route } from './update.route.ts';
import { http } from '../../../shared/http/handler.ts';
import { ok } from '../../../shared/http/responses.ts';
import { updateSecret } from '../../../shared/domain/account-secrets.ts';

export const handler = http(route, async ({ principal, params, body }) => ok(await updateSecret(principal, params.name, body)));
