// GET /api/v1/me
import { route } from '../../routes.ts';
import { http } from '../../../shared/http/handler.ts';
import { ok } from '../../../shared/http/responses.ts';

export const handler = http(route('GET /api/v1/me'), async ({ principal }) =>
  ok({ accountId: principal.accountId, userId: principal.userId, keyId: principal.keyId, scopes: principal.scopes, plan: principal.plan }),
);
