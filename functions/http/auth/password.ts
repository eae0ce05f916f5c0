// POST /api/auth/password
import { route } from './password.route.ts';
import { http } from '../../../shared/http/handler.ts';
import { noContent } from '../../../shared/http/responses.ts';
import { changePassword } from '../../../shared/domain/session-ends.ts';

export const handler = http(route, async ({ principal, body }) => {
  await changePassword(principal, body);
  return noContent();
});
