import type { Server } from 'node:http';
import { connect } from 'node:net';
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { functionOfRoute } from '../../infra/route-functions.ts';
import { routes } from '../../functions/routes.ts';
import {
  functionOf,
  GATEWAY_MAX_BODY,
  type Handler,
  LAMBDA_MAX_EVENT,
  ROUTE_TIMEOUT_SECONDS,
  type ServerOptions,
  startServer,
} from '../../infra/local/server.ts';
import type { Route } from '../../shared/http/route.ts';
import { eventually } from '../support/engine.ts';

// Lambda's and API Gateway's limits on the local HTTP server, over real HTTP. Where a test needs a
// function that hangs or records what it got, it hands the server a stand-in handler for a module.

const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
  vi.restoreAllMocks();
});

async function given(opts: Omit<ServerOptions, 'host' | 'port'>) {
  const { server, url } = await startServer({ host: '127.0.0.1', port: 0, ...opts });
  servers.push(server);
  return url;
}

const route = (path: string, handler: string, timeoutSeconds?: number): Route => ({
  method: 'GET',
  path,
  handler,
  summary: 'test route',
  tag: 'test',
  auth: { kind: 'none' },
  grants: [],
  ...(timeoutSeconds !== undefined && { timeoutSeconds }),
});

/** A handler that never answers; it notes its remaining time and whether it was released. */
function hanging() {
  const seen = { remainingMs: -1, released: false };
  let release: () => void = () => undefined;
  const handler: Handler = async (_event, context: Context) => {
    seen.remainingMs = context.getRemainingTimeInMillis();
    await new Promise<void>((resolve) => {
      release = resolve;
    });
    seen.released = true;
    return { statusCode: 200, body: 'too late' };
  };
  return { seen, handler, release: () => release() };
}

const loggedTimeout = (errors: { mock: { calls: unknown[][] } }, fn: string) =>
  errors.mock.calls.some((c) => new RegExp(`Task timed out after \\d+\\.\\d\\d seconds \\(${fn},`).test(String(c[0])));

describe('local server: function timeouts', () => {
  it("gives each route's function the route's timeout, 10 s by default, as the CDK stack does", () => {
    expect(ROUTE_TIMEOUT_SECONDS).toBe(10);
    // A console page's function serves all its function's pages: the longest timeout among them, as the stack gives it.
    for (const r of routes as readonly Route[])
      expect(functionOf(r).timeoutSeconds, `${r.method} ${r.path}`).toBe(functionOfRoute(r).timeoutSeconds ?? 10);
    expect(functionOf(route('/x', 'test/x', 3))).toMatchObject({ name: 'test-x', timeoutSeconds: 3 });
    expect(functionOf(undefined)).toMatchObject({ name: 'http-fallback', timeoutSeconds: 10 });
  });

  it('answers 500 {"message":"Internal Server Error"} when the function outlives its timeout, as HTTP API does', async () => {
    const errors = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const slow = hanging();
    const url = await given({ routes: [route('/slow', 'test/slow', 1)], handlers: { 'test/slow': slow.handler } });
    try {
      const res = await fetch(`${url}/slow`);
      expect(res.status).toBe(500);
      expect(res.headers.get('content-type')).toBe('application/json');
      expect(await res.json()).toEqual({ message: 'Internal Server Error' });
      // Abandoned, not finished: the handler was still waiting when the answer went out.
      expect(slow.seen.released).toBe(false);
      expect(slow.seen.remainingMs).toBeGreaterThan(0);
      expect(slow.seen.remainingMs).toBeLessThanOrEqual(1_000);
      expect(loggedTimeout(errors, 'test-slow')).toBe(true);
    } finally {
      slow.release();
    }
  });

  it('answers 503 {"message":"Service Unavailable"} when the integration timeout passes before the function times out', async () => {
    const errors = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const slow = hanging();
    // A function timeout at (or over) the integration timeout: the gateway gives up first.
    const url = await given({
      routes: [route('/slow', 'test/slow', 2)],
      handlers: { 'test/slow': slow.handler },
      integrationTimeoutSeconds: 1,
    });
    try {
      const res = await fetch(`${url}/slow`);
      expect(res.status).toBe(503);
      expect(await res.json()).toEqual({ message: 'Service Unavailable' });
      expect(slow.seen.remainingMs).toBeLessThanOrEqual(2_000);
      // The gateway answered before the function timed out; Lambda's timeout still comes after.
      expect(loggedTimeout(errors, 'test-slow')).toBe(false);
      await eventually(
        async () => loggedTimeout(errors, 'test-slow'),
        (logged) => logged,
      );
      expect(slow.seen.released).toBe(false);
    } finally {
      slow.release();
    }
  });

  it('answers 500 when the function throws, and passes a result within the timeout through', async () => {
    const errors = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const url = await given({
      routes: [route('/throws', 'test/throws', 1), route('/fine', 'test/fine', 1)],
      handlers: {
        'test/throws': async () => {
          throw new Error('boom');
        },
        'test/fine': async (_e, context) => ({
          statusCode: 201,
          headers: { 'content-type': 'text/plain' },
          body: String(context.getRemainingTimeInMillis() <= 1_000),
        }),
      },
    });
    const thrown = await fetch(`${url}/throws`);
    expect(thrown.status).toBe(500);
    expect(await thrown.json()).toEqual({ message: 'Internal Server Error' });
    expect(errors.mock.calls.some((c) => String(c[0]).includes('test-throws threw'))).toBe(true);
    const fine = await fetch(`${url}/fine`);
    expect(fine.status).toBe(201);
    expect(await fine.text()).toBe('true');
  });
});

describe('local server: payload limits', () => {
  // The real route table; the login route's function is a stand-in that records what reached it.
  const reached: APIGatewayProxyEventV2[] = [];
  const recorder: Handler = async (event) => {
    reached.push(event);
    return { statusCode: 200, body: 'reached' };
  };
  const post = (url: string, body: Buffer, contentType: string) =>
    fetch(`${url}/api/auth/login`, { method: 'POST', headers: { 'content-type': contentType }, body: new Uint8Array(body) });
  const MiB = 1024 * 1024;

  it('refuses an event over Lambda\'s 6 MB invoke limit with 413 {"message":"Request Entity Too Large"}; base64 counts at 4/3', async () => {
    reached.length = 0;
    const url = await given({ handlers: { 'http/auth/login': recorder } });
    expect(LAMBDA_MAX_EVENT).toBe(6_291_456);

    // 4.4 MiB of binary is 5.87 MiB in base64: the event fits, the function gets the bytes.
    const fits = Buffer.alloc(4.4 * MiB, 0xff);
    const ok = await post(url, fits, 'application/octet-stream');
    expect(ok.status).toBe(200);
    expect(await ok.text()).toBe('reached');
    expect(reached).toHaveLength(1);
    expect(reached[0]?.isBase64Encoded).toBe(true);
    expect(Buffer.from(reached[0]?.body ?? '', 'base64').equals(fits)).toBe(true);

    // 4.6 MiB of binary, under 6 MB raw, is 6.13 MiB in base64: refused before any function runs.
    const tooBig = await post(url, Buffer.alloc(4.6 * MiB, 0xff), 'application/octet-stream');
    expect(tooBig.status).toBe(413);
    expect(tooBig.headers.get('content-type')).toBe('application/json');
    expect(await tooBig.json()).toEqual({ message: 'Request Entity Too Large' });

    // Text travels as it is: 5.9 MiB of JSON fits, 6.1 MiB does not.
    const text = (n: number) => Buffer.from(JSON.stringify({ pad: 'x'.repeat(n) }));
    expect((await post(url, text(5.9 * MiB), 'application/json')).status).toBe(200);
    expect(reached).toHaveLength(2);
    expect(reached[1]?.body?.length).toBe(text(5.9 * MiB).length);
    const overText = await post(url, text(6.1 * MiB), 'application/json');
    expect(overText.status).toBe(413);
    expect(await overText.json()).toEqual({ message: 'Request Entity Too Large' });
    expect(reached).toHaveLength(2);
  });

  it('refuses a body over the gateway\'s 10 MB payload quota with 413 {"message":"Request Entity Too Large"}', async () => {
    reached.length = 0;
    const url = await given({ handlers: { 'http/auth/login': recorder } });
    // The client is still sending when the gateway decides: it gets the answer, not a reset.
    const res = await post(url, Buffer.alloc(GATEWAY_MAX_BODY + 1, 0x61), 'text/plain');
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual({ message: 'Request Entity Too Large' });
    expect(reached).toHaveLength(0);
  });

  it('logs a client that hangs up before its request is read (while the stack starts) as an info line, not a crash', async () => {
    reached.length = 0;
    let ready: () => void = () => undefined;
    const url = new URL(await given({ handlers: { 'http/auth/login': recorder }, ready: new Promise<void>((r) => (ready = r)) }));
    const info = vi.spyOn(console, 'info').mockImplementation(() => undefined);
    const error = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    // Half a body, then the client is gone: reading the rest fails with ECONNRESET "aborted".
    const socket = connect(Number(url.port), url.hostname);
    await new Promise<void>((r) => socket.once('connect', r));
    socket.write('POST /api/auth/login HTTP/1.1\r\nHost: local\r\nContent-Type: text/plain\r\nContent-Length: 100\r\n\r\nhalf');
    await new Promise((r) => setTimeout(r, 100));
    socket.destroy();
    await new Promise((r) => setTimeout(r, 100));
    ready();
    await eventually(
      async () => info.mock.calls.length + error.mock.calls.length,
      (n) => n > 0,
    );
    expect(info.mock.calls).toEqual([['local server: the client hung up before POST /api/auth/login was read']]);
    expect(error).not.toHaveBeenCalled();
    expect(reached).toHaveLength(0);
  });
});
