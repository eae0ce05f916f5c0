import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { fileURLToPath } from 'node:url';
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { routes } from '../../functions/routes.ts';
import type { Route } from '../../shared/http/route.ts';
import { matchPath } from '../../shared/http/match.ts';
import type { HttpResult } from '../../shared/http/context.ts';

type Handler = (event: APIGatewayProxyEventV2, context: Context) => Promise<HttpResult>;

/** API Gateway's payload limit: larger requests never reach a function. */
const GATEWAY_MAX_BODY = 10 * 1024 * 1024;
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
const table: readonly Route[] = [...routes].sort((a, b) => literalSegments(b) - literalSegments(a));

export function findRoute(method: string, path: string): { route?: Route; params: Record<string, string> } {
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

const lambdaContext = (name: string, requestId: string): Context =>
  ({
    awsRequestId: requestId,
    functionName: name,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:${name}`,
    memoryLimitInMB: '256',
    logGroupName: `/aws/lambda/${name}`,
    logStreamName: 'local',
    callbackWaitsForEmptyEventLoop: false,
    getRemainingTimeInMillis: () => 30_000,
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  }) as Context;

async function readBody(req: IncomingMessage): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > GATEWAY_MAX_BODY) return undefined;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

function send(res: ServerResponse, result: HttpResult) {
  const headers: Record<string, string | string[]> = { ...(result.headers as Record<string, string>) };
  if (result.cookies?.length) headers['set-cookie'] = result.cookies;
  res.writeHead(result.statusCode ?? 200, headers);
  res.end(result.body === undefined ? undefined : Buffer.from(result.body, result.isBase64Encoded ? 'base64' : 'utf8'));
}

async function handle(req: IncomingMessage, res: ServerResponse) {
  const bytes = await readBody(req);
  if (!bytes) {
    send(res, { statusCode: 413, headers: { 'content-type': 'application/json' }, body: '{"message":"Request Entity Too Large"}' });
    req.destroy();
    return;
  }
  const path = requestUrl(req).pathname;
  const { route, params } = findRoute(req.method ?? 'GET', path);
  const event = toEvent(req, bytes, route, params);
  const module = route?.handler ?? 'http/fallback';
  const handler = await load(module);
  send(res, await handler(event, lambdaContext(module.replace(/\//g, '-'), event.requestContext.requestId)));
}

/** The local HTTP server: every route of the route table, each request handled as API Gateway would. */
export async function startServer(opts: { host: string; port: number }): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    handle(req, res).catch((e: unknown) => {
      console.error('local server: handler crashed', e);
      if (!res.headersSent)
        send(res, { statusCode: 500, headers: { 'content-type': 'application/json' }, body: '{"message":"Internal Server Error"}' });
    });
  });
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve) => server.listen(opts.port, opts.host, resolve));
  const { port } = server.address() as { port: number };
  return { server, url: `http://${opts.host.includes(':') ? `[${opts.host}]` : opts.host}:${port}` };
}
