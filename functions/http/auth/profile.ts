// PUT /api/auth/me
import { route } from './profile.route.ts';
import { http } from '../../../shared/http/handler.ts';
import { ok } from '../../../shared/http/responses.ts';
import { updateProfile } from '../../../shared/domain/members.ts';

export const handler = http(route, async ({ principal, body }) => ok(await updateProfile(principal, body)));
