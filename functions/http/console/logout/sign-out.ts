// POST /console/logout: the session ends (its record deleted: the cookie is worth nothing anywhere after).
import { route } from './sign-out.route.ts';
import { logout } from '../../../../shared/domain/sessions.ts';
import { consoleHttp } from '../../../../shared/console/console-http.tsx';
import { clearSessionCookie } from '../../../../shared/console/cookie.ts';
import { seeOther } from '../../../../shared/console/render.tsx';

export const handler = consoleHttp(route, async ({ session }) => {
  await logout(session.principal);
  return seeOther('/console/login', [clearSessionCookie()]);
});
