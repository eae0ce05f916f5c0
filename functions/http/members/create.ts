// POST /api/members (admins)
import { route } from './create.route.ts';
import { http } from '../../../shared/http/handler.ts';
import { created } from '../../../shared/http/responses.ts';
import { createMember } from '../../../shared/domain/members.ts';

export const handler = http(route, async ({ principal, body }) => {
  const member = await createMember(principal, body);
  return created(member, `/api/members/${member.id}`);
});
