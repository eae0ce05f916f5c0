// POST /console/account/sign-out-everywhere: "Sign out everywhere" on the account page. Every session
// of the member ends (other browsers, API sessions, this one); this browser's cookie is cleared.
import { route } from './sign-out.route.ts';
import { consoleHttp } from '../../../../../shared/console/console-http.tsx';
import { clearSessionCookie } from '../../../../../shared/console/cookie.ts';
import { seeOther } from '../../../../../shared/console/render.tsx';
import { signOutEverywhere } from '../../../../../shared/domain/session-ends.ts';

export const handler = consoleHttp(route, async ({ session }) => {
  await signOutEverywhere(session.principal);
  return seeOther('/console/login', [clearSessionCookie()]);
});
