// DELETE /api/members/{id} (admins)
import { route } from './remove.route.ts';
import { http } from '../../../shared/http/handler.ts';
import { noContent } from '../../../shared/http/responses.ts';
import { removeMember } from '../../../shared/domain/members.ts';

export const handler = http(route, async ({ principal, params }) => {
  await removeMember(principal, params.id);
  return noContent();
});
