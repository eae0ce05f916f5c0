import { gzipSync } from 'node:zlib';
import type { Context } from 'aws-lambda';
import { AppError } from '../errors.ts';
import { DEFAULT_MAX_BODY, handlerWith, type Input } from '../http/base.ts';
import type { AppContext, HttpEvent, HttpResult, Middleware } from '../http/context.ts';
import { counted } from '../http/handler.ts';
import { bodyLimit } from '../http/middleware/body-limit.ts';
import { parseRequest } from '../http/middleware/parse-request.ts';
import { problemResult } from '../http/middleware/problem.ts';
import { requestLog } from '../http/middleware/request-log.ts';
import { pageForms } from '../http/page-form.ts';
import type { Route } from '../http/route.ts';
import { type ConsoleSession, consoleAuth, consoleForm, foundFor } from './auth.ts';
import { clearSessionCookie } from './cookie.ts';
import { page, seeOther } from './render.tsx';

/** A console route: its path under `/console` (or `/`), HTML, signed in (`console`) or not (sign-in, assets). */
export type ConsoleRoute = Route & { html: true; auth: { kind: 'console' | 'none' } };

export type ConsoleInput<R extends ConsoleRoute> = Input<R> & {
  /** The signed-in user, their email and account's name, and the session's CSRF token. */
  session: R['auth']['kind'] extends 'console' ? ConsoleSession : undefined;
  /** A POST's form fields (its CSRF token already checked). */
  form: URLSearchParams;
};

/** The sign-in page, coming back to what was asked for. */
const signIn = (event: HttpEvent) => {
  const asked = `${event.rawPath}${event.rawQueryString ? `?${event.rawQueryString}` : ''}`;
  return seeOther(`/console/login?next=${encodeURIComponent(asked)}`, [clearSessionCookie()]);
};

/** An error as a console page: its status, what went wrong and the request id (the navigation too when signed in). */
export function errorPage(error: unknown, requestId: string, session?: ConsoleSession): HttpResult {
  const problem = problemResult(error, requestId);
  const { title, detail, errors } = JSON.parse(problem.body as string) as {
    title: string;
    detail: string;
    errors?: { path: string; message: string }[];
  };
  const { 'content-type': _, ...headers } = (problem.headers ?? {}) as Record<string, string>;
  return page(
    { title, session, status: problem.statusCode ?? 500, headers },
    <>
      <p>{detail}</p>
      {errors?.length ? (
        <ul>
          {errors.map((e, i) => (
            <li key={String(i)}>
              <code>{e.path}</code>: {e.message}
            </li>
          ))}
        </ul>
      ) : null}
      <p class="muted">Request {requestId}</p>
      <p>
        <a href="/console">Back to the console</a>
      </p>
    </>,
  );
}

/**
 * The console's one place where errors become responses: a request without a live session goes to
 * the sign-in page; every other refusal is an error page (`errorPage`); a 404 says the same for an
 * unknown id and for another account's, so nothing leaks. Unexpected errors are logged and shown as a 500 page.
 */
const consoleProblems: Middleware = {
  onError: async (request) => {
    const app = (request.context as AppContext).app;
    const error = request.error;
    request.response =
      error instanceof AppError && error.code === 'SIGN_IN_REQUIRED'
        ? signIn(request.event)
        : errorPage(error, app.requestId, foundFor(app).session);
  },
};

/** Outermost first, as every route's stack (shared/http/base.ts), with the console's credential and form. */
function consoleStack(route: ConsoleRoute): Middleware[] {
  const auth = route.auth;
  const signedIn = auth.kind === 'console';
  const post = route.method === 'POST';
  return [
    requestLog(route),
    consoleProblems,
    bodyLimit(route.maxBodyBytes ?? DEFAULT_MAX_BODY),
    ...(post ? [pageForms()] : []),
    ...(auth.kind === 'console' ? [consoleAuth({ admin: auth.admin })] : []),
    parseRequest({ params: route.params, query: route.query }),
    ...(post ? [consoleForm(signedIn)] : []),
  ];
}

/** Pages are compressed for browsers that take gzip (all do): a first load's bytes are a budget. */
function compressed(result: HttpResult, event: HttpEvent): HttpResult {
  const accepts = /\bgzip\b/i.test(event.headers['accept-encoding'] ?? '');
  if (!accepts || typeof result.body !== 'string' || result.isBase64Encoded || result.body.length < 1024) return result;
  return {
    ...result,
    headers: { ...result.headers, 'content-encoding': 'gzip', vary: 'accept-encoding' },
    body: gzipSync(result.body).toString('base64'),
    isBase64Encoded: true,
  };
}

/** A console page's handler, carrying its route: the console's functions serve their pages by route key (functions/http/console/router.ts). */
export type ConsolePage = ((event: HttpEvent, context: Context) => Promise<HttpResult>) & { readonly route: ConsoleRoute };

/** The stack of `consoleStack`, then `fn`; a page's answer compressed. */
export function consoleHttp<R extends ConsoleRoute>(route: R, fn: (input: ConsoleInput<NoInfer<R>>) => Promise<HttpResult>): ConsolePage {
  const handler = counted(
    handlerWith(route, consoleStack(route), (input) => {
      const { session, form } = foundFor(input.request);
      return fn({ ...input, session, form: form ?? new URLSearchParams() } as ConsoleInput<R>);
    }),
  );
  return Object.assign(async (event: HttpEvent, context: Context) => compressed(await handler(event, context), event), { route });
}

/** What a console route's stack can refuse with (the OpenAPI document lists none: the console's pages are not the API). */
export const consoleProblemsOf = (route: ConsoleRoute) => consoleStack(route).flatMap((m) => m.problems ?? []);
