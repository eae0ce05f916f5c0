import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import fc from 'fast-check';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { type HttpRequestInput, performHttpRequest } from '../../shared/egress/http.ts';
import { isForbiddenAddress } from '../../shared/egress/policy.ts';
import { StepError } from '../../shared/step-error.ts';

// All traffic stays on 127.0.0.0/8: server A on 127.0.0.1, server B on 127.0.0.2.

type Seen = { method: string; url: string; headers: http.IncomingHttpHeaders; body: string };

type TestServer = {
  server: http.Server;
  port: number;
  connections: number;
  seen: Seen[];
  /** Sockets of requests the server never answers, with a promise for their close. */
  stalled: { socket: Socket; closed: Promise<void> }[];
  onStall: (() => void) | undefined;
};

const MiB = 1024 * 1024;

function readAll(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function streamBytes(res: http.ServerResponse, total: number) {
  const chunk = Buffer.alloc(64 * 1024, 'x');
  let sent = 0;
  const pump = () => {
    while (sent < total) {
      sent += chunk.length;
      if (!res.write(chunk)) {
        res.once('drain', pump);
        return;
      }
    }
    res.end();
  };
  res.on('error', () => {});
  pump();
}

async function startServer(
  host: string,
  routes: (t: TestServer, req: http.IncomingMessage, res: http.ServerResponse, body: string) => void,
) {
  const t: TestServer = { server: http.createServer(), port: 0, connections: 0, seen: [], stalled: [], onStall: undefined };
  t.server.on('connection', () => {
    t.connections++;
  });
  t.server.on('request', (req, res) => {
    readAll(req).then(
      (body) => {
        t.seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
        routes(t, req, res, body);
      },
      () => {},
    );
  });
  await new Promise<void>((resolve) => t.server.listen(0, host, resolve));
  t.port = (t.server.address() as AddressInfo).port;
  return t;
}

const stall = (t: TestServer, req: http.IncomingMessage) => {
  const socket = req.socket;
  t.stalled.push({ socket, closed: new Promise((resolve) => socket.once('close', () => resolve())) });
  t.onStall?.();
};

const echo = (req: http.IncomingMessage, res: http.ServerResponse, body: string) => {
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify({ method: req.method, url: req.url, headers: req.headers, body }));
};

let a: TestServer;
let b: TestServer;
let baseA: string;
let baseB: string;

beforeAll(async () => {
  b = await startServer('127.0.0.2', (t, req, res, body) => {
    if (req.url === '/stall') return stall(t, req);
    echo(req, res, body);
  });
  baseB = `http://127.0.0.2:${b.port}`;
  a = await startServer('127.0.0.1', (t, req, res, body) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const redirect = (status: number, location: string) => {
      res.writeHead(status, { location });
      res.end('redirecting');
    };
    const n = Number(url.pathname.split('/')[2]);
    switch (url.pathname.split('/')[1]) {
      case 'json':
        res.setHeader('Content-Type', 'application/json; charset=utf-8');
        res.setHeader('X-Multi', ['one', 'two']);
        res.setHeader('Set-Cookie', ['a=1', 'b=2']);
        res.setHeader('X-Custom-Header', 'Value');
        return void res.end(JSON.stringify({ ok: true, n: 42, list: [1, 'x'] }));
      case 'text':
        res.setHeader('content-type', 'text/plain');
        return void res.end('{"looks":"like json"}');
      case 'bad-json':
        res.setHeader('content-type', 'application/json');
        return void res.end('not json');
      case 'deep-json':
        res.setHeader('content-type', 'application/json');
        return void res.end(`${'['.repeat(6000)}${']'.repeat(6000)}`);
      case 'echo':
        return echo(req, res, body);
      case 'status':
        res.statusCode = n;
        return void res.end('status');
      case 'to-b':
        return redirect(302, `${baseB}/echo`);
      case 'to-b-https':
        return redirect(302, `https://127.0.0.2:${b.port}/echo`);
      case 'to-b-307':
        return redirect(307, `${baseB}/echo`);
      case 'to-file':
        return redirect(302, 'file:///etc/passwd');
      case 'to-metadata':
        return redirect(302, 'http://169.254.169.254/latest/meta-data/');
      case 'same-origin':
        return redirect(302, '/echo');
      case 'see-other':
        return redirect(303, '/echo');
      case 'found':
        return redirect(302, '/echo');
      case 'temporary':
        return redirect(307, '/echo');
      case 'chain':
        return n > 0 ? redirect(302, `/chain/${n - 1}`) : void res.end('done');
      case 'stall':
        return stall(t, req);
      case 'stall-body':
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.write('partial');
        return stall(t, req);
      case 'big':
        res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(2 * MiB) });
        return streamBytes(res, 2 * MiB);
      case 'big-chunked':
        res.writeHead(200, { 'content-type': 'text/plain' });
        return streamBytes(res, 2 * MiB);
      case 'exact':
        res.writeHead(200, { 'content-type': 'text/plain' });
        return void res.end('y'.repeat(1000));
      default:
        res.statusCode = 404;
        res.end('not found');
    }
  });
  baseA = `http://127.0.0.1:${a.port}`;
});

afterAll(async () => {
  for (const t of [a, b]) {
    t.server.closeAllConnections();
    await new Promise((resolve) => t.server.close(resolve));
  }
});

const LOCAL = { allowlist: ['127.0.0.1/32'] };
const BOTH = { allowlist: ['127.0.0.1/32', '127.0.0.2/32'] };
const get = (url: string, extra: Partial<HttpRequestInput> = {}): HttpRequestInput => ({
  method: 'GET',
  url,
  headers: {},
  timeoutMs: 5000,
  ...extra,
});

/** The StepError a promise rejects with (fails the test on anything else). */
async function stepError(p: Promise<unknown>): Promise<StepError> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(StepError);
  return e as StepError;
}

describe('performHttpRequest against an allowlisted server', () => {
  it('GET returns the status, lower-case headers (repeated ones joined) and the parsed JSON body', async () => {
    const r = await performHttpRequest(get(`${baseA}/json`), LOCAL);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ ok: true, n: 42, list: [1, 'x'] });
    expect(r.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(r.headers['x-custom-header']).toBe('Value');
    expect(r.headers['x-multi']).toBe('one, two');
    expect(r.headers['set-cookie']).toBe('a=1, b=2');
    expect(Object.keys(r.headers).every((k) => k === k.toLowerCase())).toBe(true);
  });

  it('keeps a text body as text, and an unparsable or too deeply nested JSON body as text', async () => {
    expect((await performHttpRequest(get(`${baseA}/text`), LOCAL)).body).toBe('{"looks":"like json"}');
    expect((await performHttpRequest(get(`${baseA}/bad-json`), LOCAL)).body).toBe('not json');
    expect((await performHttpRequest(get(`${baseA}/deep-json`), LOCAL)).body).toBe(`${'['.repeat(6000)}${']'.repeat(6000)}`);
  });

  it('POST delivers the body and headers exactly, with a computed content-length and the default user-agent', async () => {
    const body = JSON.stringify({ hello: 'wörld', n: [1, 2, 3] });
    const r = await performHttpRequest(
      {
        method: 'POST',
        url: `${baseA}/echo?x=1&y=%20`,
        headers: { 'Content-Type': 'application/json', 'X-Token': 'abc 123' },
        body,
        timeoutMs: 5000,
      },
      LOCAL,
    );
    expect(r.status).toBe(200);
    const seen = r.body as { method: string; url: string; headers: Record<string, string>; body: string };
    expect(seen.method).toBe('POST');
    expect(seen.url).toBe('/echo?x=1&y=%20');
    expect(seen.body).toBe(body);
    expect(seen.headers['content-type']).toBe('application/json');
    expect(seen.headers['x-token']).toBe('abc 123');
    expect(seen.headers['content-length']).toBe(String(Buffer.byteLength(body)));
    expect(seen.headers['user-agent']).toBe('flowgate-workflow/1');
  });

  it("keeps the step's own user-agent and ignores a forged content-length or host", async () => {
    const r = await performHttpRequest(
      {
        method: 'PUT',
        url: `${baseA}/echo`,
        headers: { 'User-Agent': 'mine/2', 'Content-Length': '999', Host: 'evil.example' },
        body: 'abc',
        timeoutMs: 5000,
      },
      LOCAL,
    );
    const seen = r.body as { method: string; headers: Record<string, string>; body: string };
    expect(seen.method).toBe('PUT');
    expect(seen.headers['user-agent']).toBe('mine/2');
    expect(seen.headers['content-length']).toBe('3');
    expect(seen.headers.host).toBe(`127.0.0.1:${a.port}`);
    expect(seen.body).toBe('abc');
  });

  it('does not judge the status code', async () => {
    expect((await performHttpRequest(get(`${baseA}/status/503`), LOCAL)).status).toBe(503);
    expect((await performHttpRequest(get(`${baseA}/nowhere`), LOCAL)).status).toBe(404);
  });

  it('permits a host name listed in the allowlist (case-insensitive), over http', async () => {
    const r = await performHttpRequest(get(`http://localhost:${a.port}/json`), { allowlist: ['LocalHost'] });
    expect(r.status).toBe(200);
  });

  it('refuses an invalid header as a StepError', async () => {
    const e = await stepError(performHttpRequest(get(`${baseA}/echo`, { headers: { 'x-bad': 'a\r\nInjected: 1' } }), LOCAL));
    expect(e.code).toBe('REQUEST_FAILED');
  });

  it('reports a refused connection as REQUEST_FAILED', async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const e = await stepError(performHttpRequest(get(`http://127.0.0.1:${port}/`), LOCAL));
    expect(e.code).toBe('REQUEST_FAILED');
  });
});

describe('the SSRF rule', () => {
  let lookup: ReturnType<typeof vi.spyOn>;
  let httpRequest: ReturnType<typeof vi.spyOn>;
  let httpsRequest: ReturnType<typeof vi.spyOn>;
  beforeEach(() => {
    lookup = vi.spyOn(dns, 'lookup');
    httpRequest = vi.spyOn(http, 'request');
    httpsRequest = vi.spyOn(https, 'request');
  });
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('refuses plain http to a loopback server without an allowlist, without connecting', async () => {
    const before = a.connections;
    const e = await stepError(performHttpRequest(get(`${baseA}/json`), { allowlist: [] }));
    expect(['INSECURE_URL', 'TARGET_FORBIDDEN']).toContain(e.code);
    expect(a.connections).toBe(before);
    expect(httpRequest).not.toHaveBeenCalled();
  });

  it('refuses https to 127.0.0.1 and to localhost (resolved to loopback), without connecting', async () => {
    const before = a.connections;
    for (const url of [`https://127.0.0.1:${a.port}/json`, `https://localhost:${a.port}/json`, `https://LOCALHOST:${a.port}/json`]) {
      const e = await stepError(performHttpRequest(get(url), { allowlist: [] }));
      expect(e.code).toBe('TARGET_FORBIDDEN');
      expect(e.message).toMatch(/resolves to a private or reserved address/);
    }
    expect(lookup).toHaveBeenCalled(); // localhost was resolved, then refused
    expect(httpsRequest).not.toHaveBeenCalled();
    expect(a.connections).toBe(before);
  });

  it('refuses a host only partly covered by the allowlist ranges', async () => {
    const e = await stepError(performHttpRequest(get(`https://127.0.0.1:${a.port}/json`), { allowlist: ['10.0.0.0/8', 'example.com'] }));
    expect(e.code).toBe('TARGET_FORBIDDEN');
  });

  it.each([
    'https://169.254.169.254/latest/meta-data/',
    'https://[::ffff:10.0.0.1]/',
    'https://[::ffff:a9fe:a9fe]/',
    'https://[::1]/',
    'https://[fd00:ec2::254]/',
    'https://0.0.0.0/',
    'https://100.64.0.1',
    'https://2130706433/',
    'https://0x7f.1/',
    'https://10.1/',
    'http://192.168.1.1/',
  ])('refuses %s before any network activity', async (url) => {
    const started = performance.now();
    const e = await stepError(performHttpRequest(get(url), { allowlist: [] }));
    expect(e.code).toBe('TARGET_FORBIDDEN');
    expect(performance.now() - started).toBeLessThan(1000);
    expect(lookup).not.toHaveBeenCalled();
    expect(httpRequest).not.toHaveBeenCalled();
    expect(httpsRequest).not.toHaveBeenCalled();
  });

  it.each([
    ['ftp://example.com/', 'INVALID_URL'],
    ['file:///etc/passwd', 'INVALID_URL'],
    ['javascript:alert(1)', 'INVALID_URL'],
    ['not a url', 'INVALID_URL'],
    ['', 'INVALID_URL'],
    ['https://user:pass@example.com/', 'INVALID_URL'],
    ['https://user@example.com/', 'INVALID_URL'],
    ['http://example.com/', 'INSECURE_URL'],
  ])('refuses %s with %s before any network activity', async (url, code) => {
    const e = await stepError(performHttpRequest(get(url), { allowlist: [] }));
    expect(e.code).toBe(code);
    expect(lookup).not.toHaveBeenCalled();
    expect(httpRequest).not.toHaveBeenCalled();
    expect(httpsRequest).not.toHaveBeenCalled();
  });

  it('for arbitrary strings as URLs, rejects with a StepError and never touches the network', async () => {
    const notHttps = fc
      .oneof(
        fc.string(),
        fc.string({ unit: 'binary' }),
        fc.webUrl({ validSchemes: ['http', 'ftp', 'ws', 'file'], withQueryParameters: true, withFragments: true }),
        fc
          .tuple(fc.constantFrom('https:', 'https:/', 'https://', 'http://', 'javascript:', 'data:', 'HTTPS://user:pw@'), fc.string())
          .map(([p, s]) => p + s),
      )
      .filter((s) => {
        try {
          const u = new URL(s);
          // Offline only: no https URL, and no http URL… except with credentials (refused first).
          return u.protocol !== 'https:' || u.username !== '' || u.password !== '';
        } catch {
          return true;
        }
      });
    await fc.assert(
      fc.asyncProperty(notHttps, fc.constantFrom('GET', 'POST'), async (url, method) => {
        const e = await performHttpRequest({ method, url, headers: {}, timeoutMs: 1000 }, { allowlist: [] }).then(
          () => undefined,
          (err: unknown) => err,
        );
        expect(e).toBeInstanceOf(StepError);
        // An http URL whose host is a forbidden IP literal (`http://0`) is refused as TARGET_FORBIDDEN.
        expect(['INVALID_URL', 'INSECURE_URL', 'TARGET_FORBIDDEN']).toContain((e as StepError).code);
      }),
      { numRuns: 300 },
    );
    expect(lookup).not.toHaveBeenCalled();
    expect(httpRequest).not.toHaveBeenCalled();
    expect(httpsRequest).not.toHaveBeenCalled();
  });

  it('for https URLs whose host is a private or reserved IP literal, rejects with TARGET_FORBIDDEN offline', async () => {
    const byte = fc.integer({ min: 0, max: 255 });
    const privateV4 = fc
      .oneof(
        fc.tuple(fc.constant(10), byte, byte, byte),
        fc.tuple(fc.constant(172), fc.integer({ min: 16, max: 31 }), byte, byte),
        fc.tuple(fc.constant(192), fc.constant(168), byte, byte),
        fc.tuple(fc.constant(127), byte, byte, byte),
        fc.tuple(fc.constant(169), fc.constant(254), byte, byte),
        fc.tuple(fc.constant(100), fc.integer({ min: 64, max: 127 }), byte, byte),
        fc.tuple(fc.constant(0), byte, byte, byte),
        fc.tuple(fc.integer({ min: 224, max: 255 }), byte, byte, byte),
      )
      .map((o) => o as [number, number, number, number]);
    const hex = fc.integer({ min: 0, max: 0xffff }).map((n) => n.toString(16));
    const host = fc.oneof(
      privateV4.map((o) => o.join('.')),
      privateV4.map((o) => String(((o[0] << 24) >>> 0) + (o[1] << 16) + (o[2] << 8) + o[3])), // 2130706433 form
      privateV4.map((o) => `0x${o.map((x) => x.toString(16).padStart(2, '0')).join('')}`), // 0x7f000001 form
      privateV4.map((o) => `[::ffff:${o.join('.')}]`),
      fc.tuple(fc.integer({ min: 0xfc00, max: 0xfdff }), hex, hex).map(([p, x, y]) => `[${p.toString(16)}:${x}::${y}]`),
      fc.tuple(fc.integer({ min: 0xfe80, max: 0xfebf }), hex).map(([p, x]) => `[${p.toString(16)}::${x}]`),
      fc.tuple(fc.integer({ min: 0xff00, max: 0xffff }), hex).map(([p, x]) => `[${p.toString(16)}::${x}]`),
      fc.constantFrom('[::1]', '[::]', '[fd00:ec2::254]', '[64:ff9b::a9fe:a9fe]', '[2002:a00:1::1]'),
    );
    const url = fc
      .tuple(fc.constantFrom('https://', 'http://'), host, fc.option(fc.integer({ min: 1, max: 65535 }), { nil: undefined }), fc.webPath())
      .map(([scheme, h, port, path]) => `${scheme}${h}${port === undefined ? '' : `:${port}`}${path}`);
    await fc.assert(
      fc.asyncProperty(url, async (u) => {
        const e = await performHttpRequest({ method: 'GET', url: u, headers: {}, timeoutMs: 1000 }, { allowlist: [] }).then(
          () => undefined,
          (err: unknown) => err,
        );
        expect(e).toBeInstanceOf(StepError);
        expect((e as StepError).code).toBe('TARGET_FORBIDDEN');
      }),
      { numRuns: 300 },
    );
    expect(lookup).not.toHaveBeenCalled();
    expect(httpRequest).not.toHaveBeenCalled();
    expect(httpsRequest).not.toHaveBeenCalled();
  });
});

describe('redirects', () => {
  it('refuses a redirect to a loopback address outside the allowlist, and never connects to it', async () => {
    const before = b.connections;
    for (const path of ['/to-b', '/to-b-https', '/to-b-307', '/to-metadata']) {
      const e = await stepError(performHttpRequest(get(`${baseA}${path}`), LOCAL));
      expect(e.code).toBe('TARGET_FORBIDDEN');
    }
    expect(b.connections).toBe(before);
  });

  it('refuses a redirect to another scheme', async () => {
    const e = await stepError(performHttpRequest(get(`${baseA}/to-file`), LOCAL));
    expect(e.code).toBe('INVALID_URL');
  });

  it('follows up to 5 redirects, and fails on the 6th', async () => {
    const ok = await performHttpRequest(get(`${baseA}/chain/5`), LOCAL);
    expect(ok).toMatchObject({ status: 200, body: 'done' });
    const before = a.seen.length;
    const e = await stepError(performHttpRequest(get(`${baseA}/chain/6`), LOCAL));
    expect(e.code).toBe('TOO_MANY_REDIRECTS');
    expect(a.seen.length - before).toBe(6); // the 7th request is never made
    const e2 = await stepError(performHttpRequest(get(`${baseA}/chain/2`), { ...LOCAL, maxRedirects: 1 }));
    expect(e2.code).toBe('TOO_MANY_REDIRECTS');
  });

  it('turns a POST into a GET without body on 303 (and 302), keeps it on 307', async () => {
    const post = (path: string) =>
      performHttpRequest(
        { method: 'POST', url: `${baseA}${path}`, headers: { 'content-type': 'application/json' }, body: '{"a":1}', timeoutMs: 5000 },
        LOCAL,
      );
    for (const path of ['/see-other', '/found']) {
      const seen = (await post(path)).body as { method: string; headers: Record<string, string>; body: string };
      expect(seen.method).toBe('GET');
      expect(seen.body).toBe('');
      expect(seen.headers['content-type']).toBeUndefined();
      expect(seen.headers['content-length']).toBeUndefined();
    }
    const kept = (await post('/temporary')).body as { method: string; headers: Record<string, string>; body: string };
    expect(kept.method).toBe('POST');
    expect(kept.body).toBe('{"a":1}');
    expect(kept.headers['content-type']).toBe('application/json');
  });

  it('drops every header the definition set when the origin changes, keeps them on the same origin', async () => {
    const headers = {
      Authorization: 'Bearer secret',
      Cookie: 'sid=1',
      'X-Api-Key': 'k',
      'X-Vendor-Token': 'v',
      'X-Other': 'o',
      'User-Agent': 'custom/1',
    };
    const cross = (await performHttpRequest(get(`${baseA}/to-b`, { headers }), BOTH)).body as {
      url: string;
      headers: Record<string, string>;
    };
    expect(cross.url).toBe('/echo');
    for (const name of ['authorization', 'cookie', 'x-api-key', 'x-vendor-token', 'x-other'])
      expect(cross.headers[name], name).toBeUndefined();
    expect(cross.headers['user-agent']).not.toBe('custom/1');
    expect(b.seen.at(-1)?.headers.authorization).toBeUndefined();
    const same = (await performHttpRequest(get(`${baseA}/same-origin`, { headers }), BOTH)).body as { headers: Record<string, string> };
    expect(same.headers.authorization).toBe('Bearer secret');
    expect(same.headers['x-vendor-token']).toBe('v');
    expect(same.headers['user-agent']).toBe('custom/1');
  });
});

describe('timeout, cancellation and size', () => {
  it('fails with TIMEOUT when the server never answers', async () => {
    const started = performance.now();
    const e = await stepError(performHttpRequest(get(`${baseA}/stall`, { timeoutMs: 300 }), LOCAL));
    expect(e.code).toBe('TIMEOUT');
    expect(performance.now() - started).toBeLessThan(5000);
    await a.stalled.at(-1)?.closed; // and the connection was closed
  });

  it('fails with TIMEOUT when the body stalls', async () => {
    const e = await stepError(performHttpRequest(get(`${baseA}/stall-body`, { timeoutMs: 300 }), LOCAL));
    expect(e.code).toBe('TIMEOUT');
  });

  it('fails with CANCELLED at once when the signal aborts, closing the socket', async () => {
    const ac = new AbortController();
    const arrived = new Promise<void>((resolve) => {
      a.onStall = resolve;
    });
    const p = performHttpRequest(get(`${baseA}/stall`, { timeoutMs: 20_000 }), { ...LOCAL, signal: ac.signal });
    await arrived;
    a.onStall = undefined;
    const stalled = a.stalled.at(-1);
    const started = performance.now();
    ac.abort();
    const e = await stepError(p);
    expect(e.code).toBe('CANCELLED');
    expect(performance.now() - started).toBeLessThan(1000);
    await stalled?.closed;
    expect(stalled?.socket.destroyed).toBe(true);
  });

  it('fails with CANCELLED when the signal is already aborted', async () => {
    const before = a.connections;
    const e = await stepError(performHttpRequest(get(`${baseA}/json`), { ...LOCAL, signal: AbortSignal.abort() }));
    expect(e.code).toBe('CANCELLED');
    expect(a.connections).toBe(before);
  });

  it('fails with RESPONSE_TOO_LARGE over the cap, with or without content-length', async () => {
    for (const path of ['/big', '/big-chunked']) {
      const e = await stepError(performHttpRequest(get(`${baseA}${path}`), { ...LOCAL, maxResponseBytes: MiB }));
      expect(e.code).toBe('RESPONSE_TOO_LARGE');
    }
    // The default cap is 1 MiB too.
    expect((await stepError(performHttpRequest(get(`${baseA}/big-chunked`), LOCAL))).code).toBe('RESPONSE_TOO_LARGE');
    // Exactly at the cap is fine.
    expect((await performHttpRequest(get(`${baseA}/exact`), { ...LOCAL, maxResponseBytes: 1000 })).body).toBe('y'.repeat(1000));
    expect((await stepError(performHttpRequest(get(`${baseA}/exact`), { ...LOCAL, maxResponseBytes: 999 }))).code).toBe(
      'RESPONSE_TOO_LARGE',
    );
  });
});

describe('isForbiddenAddress', () => {
  it.each([
    '10.0.0.1',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '127.0.0.1',
    '127.255.255.254',
    '169.254.169.254',
    '169.254.0.1',
    '100.64.0.1',
    '100.127.255.255',
    '0.0.0.0',
    '0.1.2.3',
    '224.0.0.1',
    '239.255.255.250',
    '255.255.255.255',
    '240.0.0.1',
    '192.0.0.1',
    '192.0.2.1',
    '198.18.0.1',
    '198.51.100.1',
    '203.0.113.1',
    '::',
    '::1',
    'fe80::1',
    'fec0::1',
    'fc00::1',
    'fd12:3456::1',
    'fd00:ec2::254',
    'ff02::1',
    '::ffff:10.0.0.1',
    '::ffff:127.0.0.1',
    '::ffff:169.254.169.254',
    '::ffff:a9fe:a9fe',
    '::a00:1', // IPv4-compatible
    '64:ff9b::a00:1', // NAT64
    '2002:c0a8:101::1', // 6to4
    '2001:0:4136:e378::1', // Teredo
    '2001:db8::1',
    '100::1',
    'not an ip',
    '',
    '1.2.3.4.5',
  ])('%s is forbidden', (ip) => {
    expect(isForbiddenAddress(ip)).toBe(true);
  });

  it.each([
    '8.8.8.8',
    '1.1.1.1',
    '93.184.216.34',
    '11.0.0.1',
    '172.15.255.255',
    '172.32.0.1',
    '100.63.255.255',
    '100.128.0.1',
    '169.253.255.255',
    '2606:4700:4700::1111',
    '2a00:1450:4001:80b::200e',
    '::ffff:8.8.8.8',
  ])('%s is allowed', (ip) => {
    expect(isForbiddenAddress(ip)).toBe(false);
  });
});
