// GET /api/auth/me
import { route } from './me.route.ts';
import { http } from '../../../shared/http/handler.ts';
import { ok } from '../../../shared/http/responses.ts';
import { me } from '../../../shared/domain/sessions.ts';

export const handler = http(route, async ({ principal }) => ok(await me(principal)));
