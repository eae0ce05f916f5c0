// GET /api/auth/me
import { route } from '../../routes.ts';
import { http } from '../../../shared/http/handler.ts';
import { ok } from '../../../shared/http/responses.ts';
import { me } from '../../../shared/domain/sessions.ts';

export const handler = http(route('GET /api/auth/me'), async ({ principal }) => ok(await me(principal)));
