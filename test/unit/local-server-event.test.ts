import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes.ts';
import { findRoute, toEvent } from '../../infra/local/server.ts';

/** What Node hands the server: header names already lower-case, as `IncomingMessage` has them. */
const req = (url: string, opts: { method?: string; headers?: Record<string, string | string[]>; remoteAddress?: string } = {}) =>
  ({
    url,
    method: opts.method ?? 'GET',
    headers: opts.headers ?? {},
    httpVersion: '1.1',
    socket: { remoteAddress: opts.remoteAddress ?? '::ffff:127.0.0.1' },
  }) as never;

const eventFor = (url: string, opts: Parameters<typeof req>[1] & { body?: Buffer } = {}) => {
  const path = new URL(url, 'http://local').pathname;
  const { route, params } = findRoute(opts.method ?? 'GET', path);
  return toEvent(req(url, opts), opts.body ?? Buffer.alloc(0), route, params);
};

/** The bytes a handler would see: what API Gateway promises to deliver. */
const decoded = (e: { body?: string; isBase64Encoded: boolean }) =>
  e.body === undefined ? Buffer.alloc(0) : Buffer.from(e.body, e.isBase64Encoded ? 'base64' : 'utf8');

describe('findRoute', () => {
  it('finds every route of the table by its method and a concrete path', () => {
    for (const r of routes) {
      const concrete = r.path.replace(/\{[^}]+\}/g, '01jabcdefghjkmnpqrstvwxyz0');
      const found = findRoute(r.method, concrete);
      expect(found.route?.handler, `${r.method} ${r.path}`).toBe(r.handler);
    }
  });

  it('picks by method as well as path, and extracts the parameters', () => {
    expect(findRoute('GET', '/api/keys')).toMatchObject({ route: { handler: 'http/keys/list' }, params: {} });
    expect(findRoute('POST', '/api/keys')).toMatchObject({ route: { handler: 'http/keys/create' }, params: {} });
    expect(findRoute('DELETE', '/api/keys/01jabc')).toMatchObject({ route: { handler: 'http/keys/revoke' }, params: { id: '01jabc' } });
    expect(findRoute('DELETE', '/api/keys/a%20b').params).toEqual({ id: 'a b' });
    expect(findRoute('GET', '/api/v1/openapi.json').route?.handler).toBe('http/v1/openapi');
    expect(findRoute('GET', '/api/v1/me').route?.handler).toBe('http/v1/me');
  });

  it('finds no route for unknown paths, methods or shapes', () => {
    for (const [m, p] of [
      ['GET', '/api/nope'],
      ['GET', '/'],
      ['GET', '/api/keys/01jabc'],
      ['PUT', '/api/keys'],
      ['DELETE', '/api/keys/'],
      ['DELETE', '/api/keys/a/b'],
      ['GET', '/api/health/'],
      ['get', '/api/health'],
      ['DELETE', '/api/keys/%E2%9C'],
    ]) {
      expect(findRoute(m as string, p as string), `${m} ${p}`).toEqual({ params: {} });
    }
  });
});

describe('toEvent', () => {
  it('builds an API Gateway payload 2.0 event', () => {
    const e = eventFor('/api/keys/01jabc?a=1&b=two%20words', {
      method: 'DELETE',
      headers: { host: 'localhost:3000', 'user-agent': 'curl/8', 'x-custom': 'Yes', accept: 'application/json' },
    });
    expect(e.version).toBe('2.0');
    expect(e.routeKey).toBe('DELETE /api/keys/{id}');
    expect(e.rawPath).toBe('/api/keys/01jabc');
    expect(e.rawQueryString).toBe('a=1&b=two%20words');
    expect(e.queryStringParameters).toEqual({ a: '1', b: 'two words' });
    expect(e.pathParameters).toEqual({ id: '01jabc' });
    expect(e.headers).toEqual({ host: 'localhost:3000', 'user-agent': 'curl/8', 'x-custom': 'Yes', accept: 'application/json' });
    expect(Object.keys(e.headers).every((k) => k === k.toLowerCase())).toBe(true);
    expect(e.requestContext).toMatchObject({
      routeKey: 'DELETE /api/keys/{id}',
      stage: '$default',
      domainName: 'localhost:3000',
      http: { method: 'DELETE', path: '/api/keys/01jabc', protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'curl/8' },
    });
    expect(e.requestContext.requestId).toEqual(expect.any(String));
    expect(e.requestContext.timeEpoch).toBeGreaterThan(Date.now() - 60_000);
    expect(e.body).toBeUndefined();
    expect(e.isBase64Encoded).toBe(false);
  });

  it('gives sourceIp without the IPv4-mapped prefix, and IPv6 addresses as they are', () => {
    expect(eventFor('/', { remoteAddress: '::ffff:127.0.0.1' }).requestContext.http.sourceIp).toBe('127.0.0.1');
    expect(eventFor('/', { remoteAddress: '192.0.2.1' }).requestContext.http.sourceIp).toBe('192.0.2.1');
    expect(eventFor('/', { remoteAddress: '::1' }).requestContext.http.sourceIp).toBe('::1');
  });

  it('has no query parameters without a query, and joins repeated ones with commas', () => {
    const none = eventFor('/api/health');
    expect(none.queryStringParameters).toBeUndefined();
    expect(none.rawQueryString).toBe('');
    expect(eventFor('/api/keys?all=true&x=1&x=2').queryStringParameters).toEqual({ all: 'true', x: '1,2' });
    expect(eventFor('/api/keys?api_key=a%2Bb&e=').queryStringParameters).toEqual({ api_key: 'a+b', e: '' });
  });

  it('keeps query parameter names that collide with Object.prototype members', () => {
    expect(eventFor('/api/keys?constructor=a&toString=b&hasOwnProperty=c').queryStringParameters).toEqual({
      constructor: 'a',
      toString: 'b',
      hasOwnProperty: 'c',
    });
  });

  it('moves cookies out of the headers, joins repeated headers, and leaves the $default route for unknown paths', () => {
    const e = eventFor('/nowhere', { headers: { cookie: 'a=1; b=2', 'x-many': ['1', '2'] } });
    expect(e.cookies).toEqual(['a=1', 'b=2']);
    expect(e.headers).toEqual({ 'x-many': '1,2' });
    expect(e.routeKey).toBe('$default');
    expect(e.pathParameters).toBeUndefined();
  });

  it('passes text bodies as strings', () => {
    const cases: [string | undefined, string][] = [
      ['application/json', '{"email":"é@x.io","n":1}'],
      ['application/json; charset=utf-8', '{"a":"✓ 🔑"}'],
      ['application/cloudevents+json', '{"specversion":"1.0"}'],
      ['text/plain', 'hello\nworld'],
      ['application/x-www-form-urlencoded', 'a=1&b=2'],
      ['application/xml', '<a/>'],
      [undefined, '{"no":"content type"}'],
    ];
    for (const [ct, text] of cases) {
      const e = eventFor('/api/auth/login', { method: 'POST', headers: ct ? { 'content-type': ct } : {}, body: Buffer.from(text) });
      expect(e.isBase64Encoded, String(ct)).toBe(false);
      expect(e.body, String(ct)).toBe(text);
    }
  });

  it('base64-encodes binary content types and bytes that are not UTF-8', () => {
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0xff]);
    const cases: [string | undefined, Buffer][] = [
      ['image/png', png],
      ['application/octet-stream', Buffer.from('plain ascii but binary type')],
      ['application/json', Buffer.from([0x7b, 0xff, 0xfe, 0x7d])],
      ['text/plain', Buffer.from([0xc3, 0x28])],
      [undefined, Buffer.from([0xed, 0xa0, 0x80])], // an encoded surrogate is not UTF-8
    ];
    for (const [ct, bytes] of cases) {
      const e = eventFor('/api/auth/login', { method: 'POST', headers: ct ? { 'content-type': ct } : {}, body: bytes });
      expect(e.isBase64Encoded, String(ct)).toBe(true);
      expect(Buffer.from(e.body as string, 'base64').equals(bytes), String(ct)).toBe(true);
    }
  });

  it('keeps a leading UTF-8 byte order mark (the bytes must arrive unchanged)', () => {
    const bytes = Buffer.from([0xef, 0xbb, 0xbf, ...Buffer.from('{"a":1}')]);
    for (const ct of ['application/json', 'text/plain', undefined]) {
      const e = eventFor('/api/auth/login', { method: 'POST', headers: ct ? { 'content-type': ct } : {}, body: bytes });
      expect(decoded(e).equals(bytes), String(ct)).toBe(true);
    }
  });

  it('always delivers exactly the bytes that were sent, whatever the content type', () => {
    const contentType = fc.option(
      fc.oneof(
        fc.constantFrom(
          'application/json',
          'application/json; charset=utf-8',
          'text/plain',
          'text/html',
          'application/xml',
          'application/x-www-form-urlencoded',
          'application/octet-stream',
          'image/png',
          'multipart/form-data; boundary=x',
          'application/vnd.api+json',
        ),
        fc.string(),
      ),
      { nil: undefined },
    );
    const bytes = fc.oneof(
      fc.uint8Array({ maxLength: 2000 }),
      fc.string({ unit: 'binary' }).map((s) => new Uint8Array(Buffer.from(s, 'utf8'))),
      // Valid UTF-8 after a byte order mark.
      fc.string({ unit: 'binary' }).map((s) => new Uint8Array(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(s, 'utf8')]))),
    );
    fc.assert(
      fc.property(bytes, contentType, (u, ct) => {
        const sent = Buffer.from(u);
        const e = toEvent(
          req('/api/auth/login', { method: 'POST', headers: ct === undefined ? {} : { 'content-type': ct } }),
          sent,
          undefined,
          {},
        );
        if (sent.length === 0) expect(e.body).toBeUndefined();
        else expect(typeof e.body).toBe('string');
        expect(decoded(e).equals(sent)).toBe(true);
      }),
      { numRuns: 500 },
    );
  });
});
