import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import type { z } from 'zod';
import type { Principal } from '../domain/principal.ts';
import type { AppContext, HttpEvent, HttpResult, Middleware, RequestState } from './context.ts';
import type { Route } from './route.ts';
import { requireConfig, settingsFor } from '../config.ts';
import { apiKeyAuth } from './middleware/api-key-auth.ts';
import { bodyLimit } from './middleware/body-limit.ts';
import { parseRequest } from './middleware/parse-request.ts';
import { requestBody } from './request-body.ts';
import { problemDetails } from './middleware/problem.ts';
import { requestLog } from './middleware/request-log.ts';
import { sessionAuth } from './middleware/session-auth.ts';
import { webhookAuth } from './middleware/webhook-auth.ts';

export const DEFAULT_MAX_BODY = 64 * 1024;

type Infer<S> = S extends z.ZodType ? z.output<S> : undefined;
/** What a handler's input depends on: routes that agree on these can share a handler function. */
export type RouteIo = Pick<Route, 'auth' | 'params' | 'query' | 'body'>;

type PrincipalOf<R extends RouteIo> = R['auth']['kind'] extends 'session'
  ? Extract<Principal, { kind: 'session' }>
  : R['auth']['kind'] extends 'apiKey'
    ? Extract<Principal, { kind: 'apiKey' }>
    : R['auth']['kind'] extends 'webhook'
      ? Extract<Principal, { kind: 'webhook' }>
      : undefined;

export type Input<R extends RouteIo> = {
  event: HttpEvent;
  params: Infer<R['params']>;
  query: Infer<R['query']>;
  body: Infer<R['body']>;
  principal: PrincipalOf<R>;
  request: RequestState;
};

/** The house stack, outermost first: request id + access log, problem rendering, body limit,
 * credentials (session, API key + metering, or the webhook's own checks), then params/query/body validation. */
export function stackFor(route: Route): Middleware[] {
  const stack: Middleware[] = [requestLog(), problemDetails({ html: route.html }), bodyLimit(route.maxBodyBytes ?? DEFAULT_MAX_BODY)];
  if (route.auth.kind === 'session') stack.push(sessionAuth({ admin: route.auth.admin }));
  if (route.auth.kind === 'apiKey') stack.push(apiKeyAuth(route.auth));
  if (route.auth.kind === 'webhook') stack.push(webhookAuth());
  stack.push(parseRequest({ params: route.params, query: route.query, body: requestBody(route) }));
  return stack;
}

/**
 * A Lambda handler for one route of the route table: the stack that route's settings call for, then
 * `fn` with typed, validated input. Checks the settings the route's grants give it first. Handlers return a result or throw `AppError`s; they never build
 * error responses.
 */
export function http<R extends Route>(route: R, fn: (input: Input<NoInfer<R>>) => Promise<HttpResult>) {
  // At import, i.e. the cold start: a function without a setting its grants give it fails here.
  requireConfig(settingsFor(route.grants));
  return middy<HttpEvent, HttpResult, Error, Context>()
    .use(stackFor(route))
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
}
