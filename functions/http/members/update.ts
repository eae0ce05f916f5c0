// PUT /api/members/{id} (admins)
import { route } from './update.route.ts';
import { http } from '../../../shared/http/handler.ts';
import { ok } from '../../../shared/http/responses.ts';
import { updateMember } from '../../../shared/domain/members.ts';

export const handler = http(route, async ({ principal, params, body }) => ok(await updateMember(principal, params.id, body)));
