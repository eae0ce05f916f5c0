import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { expect } from 'vitest';
import { checkContract } from './contract.ts';
import { identityOf, runAs } from '../../infra/local/iam.ts';
import { findRoute, functionOf } from '../../infra/local/server.ts';

/** An API Gateway HTTP API (payload 2.0) event, for calling handlers in-process. */
export function apiEvent(opts: {
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  query?: Record<string, string>;
  params?: Record<string, string>;
  body?: string | object;
  isBase64Encoded?: boolean;
  sourceIp?: string;
}): APIGatewayProxyEventV2 {
  const body = typeof opts.body === 'object' ? JSON.stringify(opts.body) : opts.body;
  const headers = { ...(typeof opts.body === 'object' ? { 'content-type': 'application/json' } : {}), ...opts.headers };
  const method = opts.method ?? 'GET';
  const path = opts.path ?? '/';
  const qs = new URLSearchParams(opts.query ?? {}).toString();
  return {
    version: '2.0',
    routeKey: `${method} ${path}`,
    rawPath: path,
    rawQueryString: qs,
    headers,
    queryStringParameters: opts.query,
    pathParameters: opts.params,
    requestContext: {
      accountId: 'test',
      apiId: 'test',
      domainName: 'test.local',
      domainPrefix: 'test',
      http: { method, path, protocol: 'HTTP/1.1', sourceIp: opts.sourceIp ?? '203.0.113.7', userAgent: 'vitest' },
      requestId: `req-${Math.random().toString(36).slice(2)}`,
      routeKey: `${method} ${path}`,
      stage: '$default',
      time: new Date().toISOString(),
      timeEpoch: Date.now(),
    },
    body,
    isBase64Encoded: opts.isBase64Encoded ?? false,
  };
}

export const lambdaContext = () => ({ awsRequestId: 'test', functionName: 'test', getRemainingTimeInMillis: () => 10_000 }) as never;

/**
 * Call a handler in-process, as the function of the route the event's method and path match (its AWS
 * calls checked against that function's grants, infra/local/iam.ts), and parse its JSON body.
 */
export async function invoke(handler: (e: APIGatewayProxyEventV2, c: never) => Promise<unknown>, event: APIGatewayProxyEventV2) {
  const { route } = findRoute(event.requestContext.http.method, event.rawPath);
  const fn = functionOf(route);
  const call = () => handler(event, lambdaContext());
  const res = (await (route ? runAs(identityOf(fn.name, fn.grants ?? []), call) : call())) as {
    statusCode: number;
    headers?: Record<string, string>;
    body?: string;
  };
  checkContract(event.requestContext.http.method, event.rawPath, res.statusCode, res.headers?.['content-type'], res.body);
  let json: any;
  try {
    json = res.body ? JSON.parse(res.body) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.statusCode, headers: res.headers ?? {}, body: res.body, json };
}

/** A fetch response read whole: its text, and its JSON when the text is JSON (else undefined). */
export async function readResponse(res: Response) {
  const text = await res.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}

/** The Authorization header of a bearer credential (session token or API key). */
export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** An answer in-process (`invoke`) or over HTTP (`readResponse`). */
type Answer =
  | { status: number; headers: Record<string, string>; json: any; body?: string }
  | { status: number; headers: Headers; json: any; text: string };

/**
 * A refusal as docs/api.md "Credentials and errors" specifies it, in-process or over HTTP: the status, a problem+json body
 * with that status and code, its requestId the X-Request-Id header, and for a 401 the Bearer challenge.
 */
export function expectProblem(res: Answer, status: number, code: string) {
  const header = (name: string) => (res.headers instanceof Headers ? (res.headers.get(name) ?? undefined) : res.headers[name]);
  const what = `${res.status} ${('text' in res ? res.text : (res.body ?? '')).slice(0, 500)}`;
  expect(res.status, what).toBe(status);
  expect(header('content-type'), what).toBe('application/problem+json');
  expect(header('x-request-id'), what).toBeTruthy();
  expect(res.json, what).toMatchObject({ status, code, requestId: header('x-request-id') });
  if (status === 401) expect(header('www-authenticate'), what).toBe('Bearer');
}
