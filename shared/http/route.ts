import type { z } from 'zod';
import type { Scope } from '../db/entities/api-key.ts';

import type { Grant } from '../config.ts';
import type { ProblemDoc } from './context.ts';

export type { Grant };

export type Auth =
  | { kind: 'none' }
  /**
   * Console session (`dys_` Bearer token); `admin` restricts the route to account admins. `keyScope`:
   * an API key with that scope is taken too (a `dyk_` Bearer or `X-API-Key`), checked and metered as
   * on v1, acting for its owner, so that a program (a SIEM, CI) reads what the owner's session reads.
   */
  | { kind: 'session'; admin?: boolean; keyScope?: undefined }
  | { kind: 'session'; admin?: undefined; keyScope: Scope }
  /**
   * A console page: the same session records, presented as the browser's session cookie (never as a
   * Bearer, and the cookie is never accepted anywhere else). Served by `consoleHttp` (shared/console/).
   */
  | { kind: 'console'; admin?: boolean }
  /** Open-platform API key with a scope; metered (usage + account rate limit). */
  | {
      kind: 'apiKey';
      scope: Scope;
      /** Accept `?api_key=` (the one-click link; the trigger's `webhook-auth` always does). */
      allowQuery?: boolean;
      /** The spec's approval endpoints answer a missing scope with 401; v1 with 403. */
      missingScopeStatus?: 401 | 403;
    }
  /** Webhook trigger: the webhook's own mode (bound key, signature or open) and gates, by `webhook-auth`. */
  | { kind: 'webhook' }
  /** A wait_for_callback's callback: its one token (`callback-auth`), metered like the v1 routes. */
  | { kind: 'callback' };

/** One HTTP route: read by the CDK stack, the local server, the OpenAPI generator and the handler. */
export type Route = {
  method: 'GET' | 'HEAD' | 'POST' | 'PUT' | 'DELETE';
  /** API Gateway syntax: `/api/keys/{id}`. */
  path: string;
  /** Module under `functions/` exporting `handler`. */
  handler: string;
  summary: string;
  tag: string;
  auth: Auth;
  grants: readonly Grant[];
  params?: z.ZodObject;
  query?: z.ZodObject;
  body?: z.ZodType;
  /**
   * The refusals of the route's own domain work (`PLAN_LIMIT_REACHED`, `EXECUTION_FINISHED`...); those
   * of the middleware stack (credentials, body, ids in params and body) are derived from it. The
   * OpenAPI document lists both per route.
   */
  errors?: readonly ProblemDoc[];
  /** Success status and body schema, for the OpenAPI document. */
  status?: number;
  response?: z.ZodType;
  /** The route answers `application/x-ndjson` (and no JSON body): what it holds. */
  ndjson?: string;
  /**
   * Deprecated: the route also answers `application/x-ndjson` when the request's Accept asks for it
   * (what it holds). Kept for the callers it was documented to; the OpenAPI document names it in the
   * success response's `x-deprecated-content`, not in its `content`, so that a typed client reads the JSON
   * body without narrowing. New routes give NDJSON its own path (`ndjson`).
   */
  ndjsonByAccept?: string;
  /** A 302 the route may answer instead of its success body, and when. */
  redirect?: string;
  /** A 204 (no body) the route may answer instead of its success body, and when. */
  noContent?: string;
  /** Largest accepted body in bytes (after base64 decoding); default 64 KiB. */
  maxBodyBytes?: number;
  /** Errors as HTML pages instead of problem+json (the one-click approval link). */
  html?: boolean;
  memoryMb?: number;
  timeoutSeconds?: number;
  /** The edge throttle this route gets from the stack's `throttles` setting; default the stage's. */
  throttle?: 'login' | 'trigger' | 'approval';
};

export const routeKey = (r: Pick<Route, 'method' | 'path'>) => `${r.method} ${r.path}`;

/** The console's pages (HTML for browsers, shared/console/): in the route table, not in the API's OpenAPI document. */
export const isConsolePage = (r: Pick<Route, 'path'>) => r.path === '/' || r.path === '/console' || r.path.startsWith('/console/');
