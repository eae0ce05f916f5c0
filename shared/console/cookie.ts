import { config } from '../config.ts';
import type { HttpEvent } from '../http/context.ts';

// The console's session cookie: the session token of `/api/auth/login`'s sessions (the same records,
// ended by logout, disable and removal), held where no script can read it. HttpOnly, SameSite=Strict,
// Path=/; over https `__Host-` prefixed and Secure (the browser then refuses it from any other
// origin or over plain http). It authenticates the console's pages only: no other route reads it.

const SECURE = '__Host-flowgate_session';
const PLAIN = 'flowgate_session';

/** Whether the console is served over https: PUBLIC_BASE_URL says where users reach the service. */
const overHttps = () => config().PUBLIC_BASE_URL.startsWith('https:');
const cookieName = () => (overHttps() ? SECURE : PLAIN);

/** The value of the cookie `name` the request carries, if any. */
function cookieValue(event: Pick<HttpEvent, 'cookies'>, name: string): string | undefined {
  const prefix = `${name}=`;
  const found = event.cookies?.find((c) => c.startsWith(prefix));
  const value = found?.slice(prefix.length).trim();
  return value ? value : undefined;
}

/** The session token the request's cookie carries, if any. */
export const sessionCookie = (event: Pick<HttpEvent, 'cookies'>): string | undefined => cookieValue(event, cookieName());

const attributes = (maxAgeSeconds: number) => `Path=/; HttpOnly; SameSite=Strict; Max-Age=${maxAgeSeconds}${overHttps() ? '; Secure' : ''}`;

/** The `Set-Cookie` value that starts a browser session. */
export const setSessionCookie = (token: string, maxAgeSeconds: number) => `${cookieName()}=${token}; ${attributes(maxAgeSeconds)}`;

/** The `Set-Cookie` value that ends it in the browser (the session record is deleted or already ended). */
export const clearSessionCookie = () => `${cookieName()}=; ${attributes(0)}`;

// The sign-in form's pre-session cookie: a random value the sign-in page sets (the same attributes),
// which its form's hidden value is made from (shared/http/page-form.ts): a form built on another site
// has no value that fits, whatever the browser sends as Origin or Fetch Metadata.
const PRE_SECURE = '__Host-flowgate_signin';
const PRE_PLAIN = 'flowgate_signin';
const preName = () => (overHttps() ? PRE_SECURE : PRE_PLAIN);
/** The pre-session cookie lasts a day: a sign-in page left open longer is shown again with a fresh one. */
export const PRE_SESSION_SECONDS = 86_400;

/** The pre-session value the request's cookie carries, if any. */
export const preSessionCookie = (event: Pick<HttpEvent, 'cookies'>): string | undefined => cookieValue(event, preName());

/** The `Set-Cookie` value that gives a browser its pre-session value. */
export const setPreSessionCookie = (value: string) => `${preName()}=${value}; ${attributes(PRE_SESSION_SECONDS)}`;

/** The `Set-Cookie` value that removes it (signed in). */
export const clearPreSessionCookie = () => `${preName()}=; ${attributes(0)}`;
