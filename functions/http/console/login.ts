// POST /console/login: the sign-in form. A session as POST /api/auth/login makes it (the same failure
// budgets), held in the session cookie; then back to the page asked for.
import { route } from './login.route.ts';
import { AppError } from '../../../shared/errors.ts';
import { login } from '../../../shared/domain/sessions.ts';
import { consoleHttp } from '../../../shared/console/console-http.tsx';
import { setSessionCookie } from '../../../shared/console/cookie.ts';
import { safeNext } from '../../../shared/console/next-path.ts';
import { seeOther } from '../../../shared/console/render.tsx';
import { signInPage } from './login-form.tsx';

/** Refusals that say only this: whether the email exists, or its member is disabled, is not told. */
const WRONG = new Set(['INVALID_CREDENTIALS', 'MEMBER_DISABLED']);

export const handler = consoleHttp(route, async ({ form, request }) => {
  const next = safeNext(form.get('next'));
  const email = (form.get('email') ?? '').slice(0, 320);
  try {
    const session = await login(email, (form.get('password') ?? '').slice(0, 1024), request.sourceIp, Date.now(), 'console');
    const maxAge = Math.max(1, Math.floor((session.expiresAt - Date.now()) / 1000));
    return seeOther(next, [setSessionCookie(session.token, maxAge)]);
  } catch (e) {
    if (e instanceof AppError && WRONG.has(e.code)) return signInPage(next, { status: 401, message: 'Email or password is wrong' }, email);
    throw e;
  }
});
