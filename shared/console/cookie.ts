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

/** The session token the request's cookie carries, if any. */
export function sessionCookie(event: Pick<HttpEvent, 'cookies'>): string | undefined {
  const prefix = `${cookieName()}=`;
  const found = event.cookies?.find((c) => c.startsWith(prefix));
  const value = found?.slice(prefix.length).trim();
  return value ? value : undefined;
}

const attributes = (maxAgeSeconds: number) => `Path=/; HttpOnly; SameSite=Strict; Max-Age=${maxAgeSeconds}${overHttps() ? '; Secure' : ''}`;

/** The `Set-Cookie` value that starts a browser session. */
export const setSessionCookie = (token: string, maxAgeSeconds: number) => `${cookieName()}=${token}; ${attributes(maxAgeSeconds)}`;

/** The `Set-Cookie` value that ends it in the browser (the session record is deleted or already ended). */
export const clearSessionCookie = () => `${cookieName()}=; ${attributes(0)}`;
