import { AppError, forbidden, unsupportedMediaType } from '../errors.ts';
import { failedAuthentication } from '../domain/auth-failures.ts';
import { consoleSession } from '../domain/sessions.ts';
import type { Principal } from '../domain/principal.ts';
import type { AppContext, HttpEvent, Middleware, RequestState } from '../http/context.ts';
import { sessionCookie } from './cookie.ts';
import { checkCsrf, CSRF_FIELD, csrfToken } from './csrf.ts';

/** Who is signed in on a console page, and what its forms carry. */
export type ConsoleSession = {
  principal: Extract<Principal, { kind: 'session' }>;
  email: string;
  accountName: string;
  /** The session's CSRF token: every form of the page carries it. */
  csrf: string;
};

/** What the console's middlewares found for one request: its session, and a POST's form. */
type Found = { session?: ConsoleSession; form?: URLSearchParams };
const found = new WeakMap<RequestState, Found>();
export const foundFor = (app: RequestState): Found => found.get(app) ?? {};
const remember = (app: RequestState, more: Found) => found.set(app, { ...foundFor(app), ...more });

/** A page asked for without a (live) session: answered with a redirect to the sign-in page (render.tsx). */
export const signInRequired = () => new AppError('unauthorized', 'SIGN_IN_REQUIRED', 'Sign in', 'Sign in to continue.');

/**
 * A console page's credential: the session cookie, resolved like a Bearer session (a disabled or removed
 * member's sessions end at once). None, or one that has ended, redirects to the sign-in page; an invalid
 * one counts against the address's failure budget (429 once over it), like every credential.
 */
export const consoleAuth = (opts: { admin?: boolean }): Middleware => ({
  problems: [
    { status: 401, code: 'SIGN_IN_REQUIRED' },
    { status: 429, code: 'RATE_LIMITED' },
    ...(opts.admin ? [{ status: 403, code: 'ADMIN_ONLY' }] : []),
  ],
  before: async ({ event, context }) => {
    const app = (context as AppContext).app;
    const token = sessionCookie(event);
    if (!token) throw signInRequired();
    const s = await consoleSession(token).catch(async (e: unknown) => {
      const refused = await failedAuthentication(app.sourceIp, e);
      throw refused instanceof AppError && refused.code === 'INVALID_SESSION' ? signInRequired() : refused;
    });
    const principal = { ...s.principal, via: { ip: app.sourceIp, channel: 'console' as const } };
    app.principal = principal;
    remember(app, { session: { ...s, principal, csrf: csrfToken(token) } });
    if (opts.admin && s.principal.role !== 'admin') throw forbidden('ADMIN_ONLY', 'Only account admins may do this.');
  },
});

const FORM = /^application\/x-www-form-urlencoded\s*(;.*)?$/i;

const decodeForm = (event: HttpEvent) =>
  new URLSearchParams(event.body ? (event.isBase64Encoded ? Buffer.from(event.body, 'base64').toString('utf8') : event.body) : '');

/**
 * A console POST's body: a form (415 otherwise), and on a signed-in page its CSRF token (the form field,
 * or `X-CSRF-Token` for a scripted request), checked before the handler runs: a request without the
 * token of this session changes nothing.
 */
export const consoleForm = (signedIn: boolean): Middleware => ({
  problems: [{ status: 415, code: 'UNSUPPORTED_MEDIA_TYPE' }, ...(signedIn ? [{ status: 403, code: 'CSRF_TOKEN_INVALID' }] : [])],
  before: async ({ event, context }) => {
    const app = (context as AppContext).app;
    const type = event.headers['content-type'];
    if (type !== undefined && !FORM.test(type.trim())) throw unsupportedMediaType();
    const form = decodeForm(event);
    if (signedIn) {
      const token = sessionCookie(event) as string;
      checkCsrf(token, form.get(CSRF_FIELD) ?? event.headers['x-csrf-token']);
    }
    remember(app, { form });
  },
});
