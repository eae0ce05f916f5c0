// POST /api/auth/logout
import { route } from './logout.route.ts';
import { http } from '../../../shared/http/handler.ts';
import { noContent } from '../../../shared/http/responses.ts';
import { logout } from '../../../shared/domain/sessions.ts';

export const handler = http(route, async ({ principal }) => {
  await logout(principal);
  return noContent();
});
