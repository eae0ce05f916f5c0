import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { fileURLToPath } from 'node:url';
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { routes } from '../../functions/routes.ts';
import type { Route } from '../../shared/http/route.ts';
import { matchPath } from '../../shared/http/match.ts';
import type { HttpResult } from '../../shared/http/context.ts';
import { functionOfRoute } from '../route-functions.ts';
import { type FunctionSettings, type Invocation, invoke } from './lambda.ts';

export type Handler = (event: APIGatewayProxyEventV2, context: Context) => Promise<HttpResult>;

/** API Gateway's payload limit (HTTP API quota "Payload size", 10 MB): larger requests never reach a function. */
export const GATEWAY_MAX_BODY = 10 * 1024 * 1024;
/**
 * Lambda's limit on a synchronous invocation's request (6 MB, 6,291,456 bytes): it applies to the
 * event API Gateway sends, so headers count and a base64-encoded body counts at 4/3 of its size.
 */
export const LAMBDA_MAX_EVENT = 6 * 1024 * 1024;
/** A route function's timeout when its route sets none (`infra/constructs/route-function.ts`). */
export const ROUTE_TIMEOUT_SECONDS = 10;
/** HTTP API's integration timeout: 30 s, the default and the most it allows (the stack keeps the default). */
export const INTEGRATION_TIMEOUT_SECONDS = 30;
const functionsDir = fileURLToPath(new URL('../../functions/', import.meta.url));

const handlers = new Map<string, Promise<Handler>>();
const load = (module: string) => {
  let h = handlers.get(module);
  if (!h) {
    h = import(`${functionsDir}${module}.ts`).then((m: { handler: Handler }) => m.handler);
    handlers.set(module, h);
  }
  return h;
};

/** API Gateway picks the route with the most literal segments when several templates match. */
const literalSegments = (r: Route) => r.path.split('/').filter((s) => !s.startsWith('{')).length;
const routeTable = (rs: readonly Route[]): readonly Route[] => [...rs].sort((a, b) => literalSegments(b) - literalSegments(a));
const defaultTable = routeTable(routes);

export function findRoute(
  method: string,
  path: string,
  table: readonly Route[] = defaultTable,
): { route?: Route; params: Record<string, string> } {
  for (const route of table) {
    if (route.method !== method) continue;
    const params = matchPath(route.path, path);
    if (params) return { route, params };
  }
  return { params: {} };
}

const TEXT = /^(text\/|application\/([\w.-]+\+)?(json|xml)|application\/(x-www-form-urlencoded|javascript))/i;
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Text bodies are passed as strings, anything else (or invalid UTF-8) base64, as API Gateway does. */
function encodeBody(bytes: Buffer, contentType: string | undefined) {
  if (bytes.length === 0) return { body: undefined, isBase64Encoded: false };
  if (contentType === undefined || TEXT.test(contentType)) {
    try {
      return { body: utf8.decode(bytes), isBase64Encoded: false };
    } catch {
      // not UTF-8: fall through to base64 so the bytes survive unchanged
    }
  }
  return { body: bytes.toString('base64'), isBase64Encoded: true };
}

/** The request target as a URL; `//x/y` is a path here, not a host (origin-form, RFC 9112). */
const requestUrl = (req: IncomingMessage) => {
  const target = req.url ?? '/';
  return target.startsWith('/') ? new URL(`http://local${target}`) : new URL(target, 'http://local');
};

/** Turn a Node request into an API Gateway HTTP API payload 2.0 event. */
export function toEvent(
  req: IncomingMessage,
  bytes: Buffer,
  route: Route | undefined,
  params: Record<string, string>,
): APIGatewayProxyEventV2 {
  const url = requestUrl(req);
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.headers)) if (v !== undefined && k !== 'cookie') headers[k] = Array.isArray(v) ? v.join(',') : v;
  const joined = new Map<string, string>();
  for (const [k, v] of url.searchParams) joined.set(k, joined.has(k) ? `${joined.get(k)},${v}` : v);
  const query: Record<string, string> = Object.fromEntries(joined);
  const now = new Date();
  const routeKey = route ? `${route.method} ${route.path}` : '$default';
  return {
    version: '2.0',
    routeKey,
    rawPath: url.pathname,
    rawQueryString: url.search.slice(1),
    cookies: req.headers.cookie?.split(/;\s*/),
    headers,
    queryStringParameters: url.search ? query : undefined,
    pathParameters: route && Object.keys(params).length ? params : undefined,
    requestContext: {
      accountId: 'local',
      apiId: 'local',
      domainName: headers.host ?? 'localhost',
      domainPrefix: 'local',
      http: {
        method: req.method ?? 'GET',
        path: url.pathname,
        protocol: `HTTP/${req.httpVersion}`,
        sourceIp: (req.socket.remoteAddress ?? '').replace(/^::ffff:/, ''),
        userAgent: headers['user-agent'] ?? '',
      },
      requestId: randomUUID(),
      routeKey,
      stage: '$default',
      time: now.toISOString(),
      timeEpoch: now.getTime(),
    },
    ...encodeBody(bytes, headers['content-type']),
  };
}

/**
 * The request body, or undefined past the gateway's limit. The rest of a body that is too large is
 * read and dropped (up to a bound), so the client, still sending, gets the 413 instead of a reset.
 */
async function readBody(req: IncomingMessage): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > 4 * GATEWAY_MAX_BODY) break;
    if (size <= GATEWAY_MAX_BODY) chunks.push(chunk as Buffer);
  }
  return size > GATEWAY_MAX_BODY ? undefined : Buffer.concat(chunks);
}

function send(res: ServerResponse, result: HttpResult) {
  const headers: Record<string, string | string[]> = { ...(result.headers as Record<string, string>) };
  if (result.cookies?.length) headers['set-cookie'] = result.cookies;
  res.writeHead(result.statusCode ?? 200, headers);
  res.end(result.body === undefined ? undefined : Buffer.from(result.body, result.isBase64Encoded ? 'base64' : 'utf8'));
}

/** API Gateway's own answers (HTTP API): JSON `{"message": ...}`, never the function's. */
const gatewayError = (statusCode: 413 | 500 | 503, message: string): HttpResult => ({
  statusCode,
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ message: message }),
});
export const GATEWAY = {
  /** Over the 10 MB payload quota, or an event over Lambda's 6 MB invoke limit. */
  tooLarge: gatewayError(413, 'Request Entity Too Large'),
  /** The function failed: threw, or ran out of its timeout. */
  functionError: gatewayError(500, 'Internal Server Error'),
  /** The integration timeout (30 s) passed before the function answered. */
  integrationTimeout: gatewayError(503, 'Service Unavailable'),
} as const;

export type ServerOptions = {
  host: string;
  port: number;
  /** The route table (default: `functions/routes.ts`). */
  routes?: readonly Route[];
  /** Handlers by module name, used before `functions/<module>.ts` is loaded (tests). */
  handlers?: Record<string, Handler>;
  /** HTTP API's integration timeout, at most (and by default) 30 s. */
  integrationTimeoutSeconds?: number;
  /** Requests wait for this before they reach a handler (the local stack's startup: its URL is known only once listening). */
  ready?: Promise<unknown>;
};

/**
 * The function behind a route (the fallback for none), with the settings the CDK stack gives it: those
 * of all the routes it serves (a console function serves many: infra/route-functions.ts).
 */
export function functionOf(route: Route | undefined): FunctionSettings {
  const module = route?.handler ?? 'http/fallback';
  const fn = route && functionOfRoute(route);
  return {
    name: module.replace(/\//g, '-'),
    timeoutSeconds: fn?.timeoutSeconds ?? ROUTE_TIMEOUT_SECONDS,
    memoryMb: fn?.memoryMb,
    grants: fn ? fn.grants : [],
  };
}

/**
 * Invoke the route's function as API Gateway does: within the function's timeout (a timed-out
 * function is a function error, 500) and the integration's (503 if that passes first; the
 * function runs on until its own timeout, as on AWS).
 */
async function integrate(fn: FunctionSettings, handler: Handler, event: APIGatewayProxyEventV2, integrationSeconds: number) {
  const invocation = invoke(fn, handler, event, event.requestContext.requestId);
  if (fn.timeoutSeconds < integrationSeconds) return invocation;
  let timer: NodeJS.Timeout | undefined;
  const integrationTimeout = new Promise<'integration timeout'>((resolve) => {
    timer = setTimeout(() => resolve('integration timeout'), integrationSeconds * 1000);
  });
  try {
    return await Promise.race<Invocation<HttpResult> | 'integration timeout'>([invocation, integrationTimeout]);
  } finally {
    clearTimeout(timer);
  }
}

async function handle(req: IncomingMessage, res: ServerResponse, opts: ServerOptions, table: readonly Route[]) {
  const bytes = await readBody(req);
  if (!bytes) {
    send(res, { ...GATEWAY.tooLarge, headers: { ...GATEWAY.tooLarge.headers, connection: 'close' } });
    return;
  }
  const path = requestUrl(req).pathname;
  const { route, params } = findRoute(req.method ?? 'GET', path, table);
  const event = toEvent(req, bytes, route, params);
  if (Buffer.byteLength(JSON.stringify(event)) > LAMBDA_MAX_EVENT) return send(res, GATEWAY.tooLarge);
  const module = route?.handler ?? 'http/fallback';
  const handler = opts.handlers?.[module] ?? (await load(module));
  const fn = functionOf(route);
  const outcome = await integrate(fn, handler, event, opts.integrationTimeoutSeconds ?? INTEGRATION_TIMEOUT_SECONDS);
  if (outcome === 'integration timeout') return send(res, GATEWAY.integrationTimeout);
  if (outcome.status === 'ok') return send(res, outcome.result);
  if (outcome.status === 'error') console.error(`local server: ${fn.name} threw`, outcome.error);
  send(res, GATEWAY.functionError);
}

/** The local HTTP server: every route of the route table, each request handled as API Gateway would. */
export async function startServer(opts: ServerOptions): Promise<{ server: Server; url: string }> {
  const table = opts.routes ? routeTable(opts.routes) : defaultTable;
  const server = createServer((req, res) => {
    Promise.resolve(opts.ready)
      .then(() => handle(req, res, opts, table))
      .catch((e: unknown) => {
        // A client that hung up before its request was read (e.g. while the stack starts) is no crash.
        if ((e as NodeJS.ErrnoException).code === 'ECONNRESET' && req.destroyed)
          return console.info(`local server: the client hung up before ${req.method} ${requestUrl(req).pathname} was read`);
        console.error('local server: handler crashed', e);
        if (!res.headersSent) send(res, GATEWAY.functionError);
      });
  });
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve) => server.listen(opts.port, opts.host, resolve));
  const { port } = server.address() as { port: number };
  return { server, url: `http://${opts.host.includes(':') ? `[${opts.host}]` : opts.host}:${port}` };
}
