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
  /** The webhook a trigger names, once found, and the key it was called with: refusals count against them. */
  trigger?: { webhook: Webhook; keyId?: string };
  params?: unknown;
  query?: unknown;
  body?: unknown;
  /** Headers every response of this request carries (rate limit), success or error. */
  responseHeaders: Record<string, string>;
};

export type AppContext = Context & { app: RequestState };
export type HttpEvent = APIGatewayProxyEventV2;
export type HttpResult = APIGatewayProxyStructuredResultV2;
export type Middleware = MiddlewareObj<HttpEvent, HttpResult, Error, Context>;
export type MiddlewareRequest = Request<HttpEvent, HttpResult, Error, Context>;
