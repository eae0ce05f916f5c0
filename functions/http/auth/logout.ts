// POST /api/auth/logout
import { route } from '../../routes.ts';
import { http } from '../../../shared/http/handler.ts';
import { noContent } from '../../../shared/http/responses.ts';
import { logout } from '../../../shared/domain/sessions.ts';

export const handler = http(route('POST /api/auth/logout'), async ({ principal }) => {
  await logout(principal);
  return noContent();
});
