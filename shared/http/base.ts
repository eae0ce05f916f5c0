import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import type { z } from 'zod';
import type { Principal } from '../domain/principal.ts';
import type { AppContext, HttpEvent, HttpResult, Middleware, RequestState } from './context.ts';
import type { Route } from './route.ts';
import { requireConfig, settingsFor } from '../config.ts';
import { inLogScope } from '../logger.ts';
import { holdMetrics } from '../metrics.ts';
import { bodyLimit } from './middleware/body-limit.ts';
import { parseRequest } from './middleware/parse-request.ts';
import { type ProblemRenderer, problemDetails } from './middleware/problem.ts';
import { requestLog } from './middleware/request-log.ts';

// The house stack without credentials: `http` (handler.ts) adds each route's credentials; a route
// that needs none and touches no storage (health) uses `storageFreeHttp` and bundles no data client.

export const DEFAULT_MAX_BODY = 64 * 1024;

type Infer<S> = S extends z.ZodType ? z.output<S> : undefined;
/** What a handler's input depends on: routes that agree on these can share a handler function. */
export type RouteIo = Pick<Route, 'auth' | 'params' | 'query' | 'body'>;

type PrincipalOf<R extends RouteIo> = R['auth'] extends { kind: 'session'; keyScope: string }
  ? Extract<Principal, { kind: 'session' | 'apiKey' }>
  : R['auth']['kind'] extends 'session' | 'console'
    ? Extract<Principal, { kind: 'session' }>
    : R['auth']['kind'] extends 'apiKey'
      ? Extract<Principal, { kind: 'apiKey' }>
      : R['auth']['kind'] extends 'webhook'
        ? Extract<Principal, { kind: 'webhook' }>
        : R['auth']['kind'] extends 'callback'
          ? Extract<Principal, { kind: 'callback' }>
          : undefined;

export type Input<R extends RouteIo> = {
  event: HttpEvent;
  params: Infer<R['params']>;
  query: Infer<R['query']>;
  body: Infer<R['body']>;
  principal: PrincipalOf<R>;
  request: RequestState;
};

/**
 * What an HTML route's stack adds (page-handler.ts): its errors as pages, and its form POSTs' checks.
 * Kept out of this module so that no other route's bundle holds them.
 */
export type PageParts = { render: ProblemRenderer; forms: () => Middleware };

/**
 * Outermost first: request id + access log, problem rendering, body limit, (the form POST of an HTML
 * page: no cross-site request, page-form.ts), `credentials`, then params/query/body validation. An
 * HTML route without its `page` parts fails at the cold start (it is served by `pageHttp`).
 */
export function stackWith(route: Route, credentials: Middleware | undefined, body = route.body, page?: PageParts): Middleware[] {
  if (route.html && !page) throw new Error(`${route.method} ${route.path} is an HTML route: serve it with pageHttp (page-handler.ts)`);
  return [
    requestLog(route),
    problemDetails(page?.render),
    bodyLimit(route.maxBodyBytes ?? DEFAULT_MAX_BODY),
    ...(page && route.method === 'POST' ? [page.forms()] : []),
    ...(credentials ? [credentials] : []),
    parseRequest({ params: route.params, query: route.query, body }),
  ];
}

/**
 * A Lambda handler for one route: `stack`, then `fn` with typed, validated input. Checks the
 * settings the route's grants give it first (at import, i.e. the cold start: a function without a
 * setting its grants give it fails there). Handlers return a result or throw `AppError`s; they never
 * build error responses.
 */
export function handlerWith<R extends Route>(route: R, stack: Middleware[], fn: (input: Input<NoInfer<R>>) => Promise<HttpResult>) {
  requireConfig(settingsFor(route.grants));
  const handler = middy<HttpEvent, HttpResult, Error, Context>()
    .use(stack)
    .handler(async (event, context) => {
      const app = (context as AppContext).app;
      return fn({
        event,
        params: app.params,
        query: app.query,
        body: app.body,
        principal: app.principal,
        request: app,
      } as Input<R>);
    });
  // Each invocation logs in a scope of its own: its lines carry its request id, the one its answer carries.
  return (event: HttpEvent, context: Context): Promise<HttpResult> => holdMetrics(() => inLogScope(() => handler(event, context)));
}

/** A route without credentials that reads and writes no storage (health): the stack above, nothing else. */
export function storageFreeHttp<R extends Route & { auth: { kind: 'none' }; grants: readonly [] }>(
  route: R,
  fn: (input: Input<NoInfer<R>>) => Promise<HttpResult>,
) {
  return handlerWith(route, stackWith(route, undefined), fn);
}
