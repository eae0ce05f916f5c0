import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import type { MiddlewareObj, Request } from '@middy/core';
import type { Webhook } from '../db/entities/webhook.ts';
import type { Principal } from '../domain/principal.ts';

/** Per-request state the house middlewares fill in for the handler. */
export type RequestState = {
  requestId: string;
  startedAt: number;
  sourceIp: string;
  principal?: Principal;
  /**
   * The webhook a trigger names, once found, and the key it was called with: refusals count against them.
   * `authenticated`: past the webhook's credential check (its inbound log may replay a later refusal).
   * `accountRequests`: the account's requests in the current rate window, as its rate limit counted
   * them (`takeAccountBudget`'s `used`): the run's lane is decided by it (shared/engine/lanes.ts).
   */
  trigger?: { webhook: Webhook; keyId?: string; authenticated?: boolean; accountRequests?: number };
  params?: unknown;
  query?: unknown;
  body?: unknown;
  /** Headers every response of this request carries (rate limit), success or error. */
  responseHeaders: Record<string, string>;
};

export type AppContext = Context & { app: RequestState };
export type HttpEvent = APIGatewayProxyEventV2;
export type HttpResult = APIGatewayProxyStructuredResultV2;
/** A refusal a middleware (or a domain) can answer with: its status and `code`. The OpenAPI document lists them per route. */
export type ProblemDoc = { status: number; code: string };
/** A middleware of the house stack, with the refusals it can produce (`problems`, read by the OpenAPI generator). */
export type Middleware = MiddlewareObj<HttpEvent, HttpResult, Error, Context> & { problems?: readonly ProblemDoc[] };
export type MiddlewareRequest = Request<HttpEvent, HttpResult, Error, Context>;
