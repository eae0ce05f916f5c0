// GET /api/secrets
import { route } from '../../routes.ts';
import { http } from '../../../shared/http/handler.ts';
import { ok } from '../../../shared/http/responses.ts';
import { listAccountSecrets } from '../../../shared/domain/account-secrets.ts';

export const handler = http(route('GET /api/secrets'), async ({ principal }) => ok(await listAccountSecrets(principal)));
