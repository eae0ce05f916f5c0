// POST /console/login: the sign-in form. Only from our sign-in page (its pre-session value: 403 and the
// form again otherwise, nothing checked). A session as POST /api/auth/login makes it (the same failure
// budgets), held in the session cookie; then back to the page asked for.
import { route } from './sign-in.route.ts';
import { AppError } from '../../../../shared/errors.ts';
import { login } from '../../../../shared/domain/sessions.ts';
import { consoleHttp } from '../../../../shared/console/console-http.tsx';
import { clearPreSessionCookie, setSessionCookie } from '../../../../shared/console/cookie.ts';
import { safeNext } from '../../../../shared/console/next-path.ts';
import { seeOther } from '../../../../shared/console/render.tsx';
import { PAGE_FIELD } from '../../../../shared/http/page-form.ts';
import { fromSignInPage, signInPage } from './form.tsx';

/** Refusals that say only this: whether the email exists, or its member is disabled, is not told. */
const WRONG = new Set(['INVALID_CREDENTIALS', 'MEMBER_DISABLED']);

export const handler = consoleHttp(route, async ({ event, form, request }) => {
  const next = safeNext(form.get('next'));
  const email = (form.get('email') ?? '').slice(0, 320);
  if (!fromSignInPage(event, form.get(PAGE_FIELD)))
    return signInPage(
      event,
      next,
      { status: 403, message: 'This sign-in form has expired or did not come from this site. Sign in again.' },
      email,
    );
  try {
    const session = await login(email, (form.get('password') ?? '').slice(0, 1024), request.sourceIp, Date.now(), 'console');
    const maxAge = Math.max(1, Math.floor((session.expiresAt - Date.now()) / 1000));
    return seeOther(next, [setSessionCookie(session.token, maxAge), clearPreSessionCookie()]);
  } catch (e) {
    if (e instanceof AppError && WRONG.has(e.code))
      return signInPage(event, next, { status: 401, message: 'Email or password is wrong' }, email);
    throw e;
  }
});
