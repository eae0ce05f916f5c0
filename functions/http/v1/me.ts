// GET /api/v1/me
import { route } from './me.route.ts';
import { http } from '../../../shared/http/handler.ts';
import { ok } from '../../../shared/http/responses.ts';

export const handler = http(route, async ({ principal }) =>
  ok({ accountId: principal.accountId, userId: principal.userId, keyId: principal.keyId, scopes: principal.scopes, plan: principal.plan }),
);
