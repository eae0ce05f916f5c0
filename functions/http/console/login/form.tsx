import { randomBytes } from 'node:crypto';
import { preSessionCookie, setPreSessionCookie } from '../../../../shared/console/cookie.ts';
import { page } from '../../../../shared/console/render.tsx';
import type { HttpEvent } from '../../../../shared/http/context.ts';
import { checkPageForm, PAGE_FIELD, pageFormValue } from '../../../../shared/http/page-form.ts';

/** Where the sign-in form is, and what its hidden value is made for. */
export const SIGN_IN_PATH = '/console/login';
const PRE_SESSION = /^[A-Za-z0-9_-]{43}$/;

/** The browser's pre-session value when it carries a well-formed one. */
const preSessionOf = (event: Pick<HttpEvent, 'cookies'>) => {
  const value = preSessionCookie(event);
  return value && PRE_SESSION.test(value) ? value : undefined;
};

/**
 * Whether a sign-in POST comes from our sign-in page: its hidden value must be made from the browser's
 * pre-session cookie (HttpOnly, SameSite=Strict, unreadable elsewhere). Sign-in CSRF (a page of another
 * site signing the browser in as the attacker) fails here even when the browser sends neither Fetch
 * Metadata nor a real Origin.
 */
export function fromSignInPage(event: Pick<HttpEvent, 'cookies'>, sent: string | null): boolean {
  try {
    checkPageForm(preSessionOf(event), SIGN_IN_PATH, sent);
    return true;
  } catch {
    return false;
  }
}

/**
 * The sign-in form: email and password, where to go after (a console path; next-path.ts), and its
 * pre-session value (`fromSignInPage`); a browser without a pre-session cookie is given one.
 */
export function signInPage(
  event: Pick<HttpEvent, 'cookies'>,
  next: string,
  failed: { status: number; message: string } | undefined,
  email = '',
) {
  const known = preSessionOf(event);
  const pre = known ?? randomBytes(32).toString('base64url');
  return page(
    { title: 'Sign in', status: failed?.status ?? 200, ...(known ? {} : { cookies: [setPreSessionCookie(pre)] }) },
    <form method="post" action={SIGN_IN_PATH}>
      {failed ? (
        <p role="alert" class="status-FAILED">
          {failed.message}
        </p>
      ) : null}
      <input type="hidden" name={PAGE_FIELD} value={pageFormValue(pre, SIGN_IN_PATH)} />
      <input type="hidden" name="next" value={next} />
      <label>
        Email
        <input type="email" name="email" autocomplete="username" required value={email} />
      </label>
      <label>
        Password
        <input type="password" name="password" autocomplete="current-password" required />
      </label>
      <button type="submit">Sign in</button>
    </form>,
  );
}
