// GET /api/secrets
import { route } from './list.route.ts';
import { http } from '../../../shared/http/handler.ts';
import { ok } from '../../../shared/http/responses.ts';
import { listAccountSecrets } from '../../../shared/domain/account-secrets.ts';

export const handler = http(route, async ({ principal }) => ok(await listAccountSecrets(principal)));
