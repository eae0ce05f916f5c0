// POST /api/auth/login
import { route } from './login.route.ts';
import { http } from '../../../shared/http/handler.ts';
import { ok } from '../../../shared/http/responses.ts';
import { login } from '../../../shared/domain/sessions.ts';

export const handler = http(route, async ({ body, request }) => ok(await login(body.email, body.password, request.sourceIp)));
