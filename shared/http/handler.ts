import type { Context } from 'aws-lambda';
import type { HttpEvent, HttpResult, Middleware } from './context.ts';
import type { Route } from './route.ts';
import { flushCountsWhenDue } from '../db/counters.ts';
import { handlerWith, type Input, type PageParts, stackWith } from './base.ts';
import { apiKeyAuth } from './middleware/api-key-auth.ts';
import { sessionAuth } from './middleware/session-auth.ts';
import { sessionOrKeyAuth } from './middleware/session-or-key-auth.ts';
import { webhookAuth } from './middleware/webhook-auth.ts';
import { requestBody } from './request-body.ts';

export { DEFAULT_MAX_BODY, type Input, type RouteIo } from './base.ts';

/**
 * The house stack (base.ts) with the route's credentials: session, API key + metering, or the
 * webhook's own checks; a console route's body refuses unknown fields (request-body.ts).
 */
export function stackFor(route: Route, page?: PageParts): Middleware[] {
  const auth = route.auth;
  const credentials =
    auth.kind === 'session'
      ? auth.keyScope
        ? sessionOrKeyAuth({ keyScope: auth.keyScope })
        : sessionAuth({ admin: auth.admin })
      : auth.kind === 'apiKey'
        ? apiKeyAuth(auth)
        : auth.kind === 'webhook'
          ? webhookAuth()
          : auth.kind === 'callback'
            ? callbackOnly
            : auth.kind === 'console'
              ? consoleOnly
              : undefined;
  return stackWith(route, credentials, requestBody(route), page);
}

/**
 * A Lambda handler for one route of the route table: the stack that route's settings call for, then
 * `fn` with typed, validated input (`handlerWith`). At the end of an invocation that finds the last
 * write of this instance's counts a second old or more, it writes them (`counters.ts`): Lambda
 * freezes the instance between invocations.
 */
export function http<R extends Route>(route: R, fn: (input: Input<NoInfer<R>>) => Promise<HttpResult>) {
  return counted(handlerWith(route, stackFor(route), fn));
}

/**
 * `http` for a webhook's trigger: the same stack as `stackFor` gives it (a trigger's body keeps
 * unknown fields), named here so the trigger's bundle holds no other credentials' code.
 */
export function webhookHttp<R extends Route & { auth: { kind: 'webhook' } }>(
  route: R,
  fn: (input: Input<NoInfer<R>>) => Promise<HttpResult>,
) {
  return counted(handlerWith(route, stackWith(route, webhookAuth()), fn));
}

/** What the callback routes' credential (`callback-auth`) refuses: listed for the OpenAPI document. */
export const CALLBACK_AUTH_PROBLEMS = [
  { status: 401, code: 'UNAUTHORIZED' },
  { status: 401, code: 'INVALID_CALLBACK_TOKEN' },
  { status: 404, code: 'CALLBACK_NOT_FOUND' },
  { status: 429, code: 'RATE_LIMITED' },
] as const;

/**
 * A callback route's credential is checked by `callbackHttp` (callback-handler.ts), which other
 * routes' bundles do not hold; here it only names its refusals, and fails closed if `http` is used
 * for such a route by mistake.
 */
const callbackOnly: Middleware = {
  problems: CALLBACK_AUTH_PROBLEMS,
  before: () => {
    throw new Error('a callback route is served by callbackHttp');
  },
};

/** A console page's credential (the session cookie) is checked by `consoleHttp` (shared/console/): fails closed here. */
const consoleOnly: Middleware = {
  before: () => {
    throw new Error('a console page is served by consoleHttp');
  },
};

export const counted =
  (handler: (event: HttpEvent, context: Context) => Promise<HttpResult>) =>
  async (event: HttpEvent, context: Context): Promise<HttpResult> => {
    try {
      return await handler(event, context);
    } finally {
      await flushCountsWhenDue();
    }
  };
