// Shared by the no-5xx property tests: the request shape they generate and its generators, the
// error-contract check of every answer, and well-formed requests that every property tries first.
import fc from 'fast-check';
import { expect } from 'vitest';
import { apiEvent, invoke } from './http.ts';

type Handler = Parameters<typeof invoke>[0];

export type Body = { body?: string; isBase64Encoded: boolean };
export type Request = {
  headers: Record<string, string>;
  query?: Record<string, string>;
  params?: Record<string, string>;
  body: Body;
  sourceIp: string;
};

/** A well-formed request: the given credential, a JSON body when given, from a public address. */
export const good = (
  authorization: string,
  opts: { json?: unknown; params?: Record<string, string>; query?: Record<string, string> } = {},
): Request => ({
  headers: { authorization, ...(opts.json !== undefined ? { 'content-type': 'application/json' } : {}) },
  body: opts.json !== undefined ? { body: JSON.stringify(opts.json), isBase64Encoded: false } : { isBase64Encoded: false },
  sourceIp: '203.0.113.7',
  ...(opts.params ? { params: opts.params } : {}),
  ...(opts.query ? { query: opts.query } : {}),
});

/**
 * fast-check parameters whose `examples` run first on every run: a property that counts its
 * successes then sees at least these, however the random requests fall.
 */
export const runsWith = (runs: { numRuns: number }, ...examples: Request[]) => ({
  ...runs,
  examples: examples.map((r) => [r] as [Request]),
});

export const b64 = (s: string | Uint8Array) => Buffer.from(s).toString('base64');
export const b64url = (s: string | Uint8Array) => Buffer.from(s).toString('base64url');
export const serialize = (v: unknown) => {
  try {
    return JSON.stringify(v) ?? 'undefined';
  } catch {
    return '[unserializable]';
  }
};

/** Any UTF-16 code unit, lone surrogates included (they survive JSON as `\ud800` escapes). */
/** Hostile nesting (issue: a 6,000-deep body overflowed the stack after parsing): 60 to 8,000 levels of arrays or objects inside an object. */
export const deeplyNested = fc
  .record({ depth: fc.integer({ min: 60, max: 8_000 }), objects: fc.boolean() })
  .map(
    ({ depth, objects }) =>
      `{"deep":${objects ? `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}` : `${'['.repeat(depth)}${']'.repeat(depth)}`}}`,
  );
export const anyUnits = (maxLength = 40) => fc.string({ unit: fc.nat(0xffff).map((c) => String.fromCharCode(c)), maxLength });
export const text = fc.oneof(fc.string(), fc.string({ unit: 'binary' }), anyUnits());
export const tokenBody = fc.stringMatching(/^[0-9a-z]{26}_[0-9A-Za-z]{49}$/);
export const ulidish = fc.stringMatching(/^[0-9a-z]{26}$/);
export const sourceIp = fc.oneof(fc.ipV4(), fc.ipV6());
export const printable = fc.string({
  unit: fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)),
  minLength: 1,
  maxLength: 40,
});

/** Change one character of a string: right shape, wrong content. */
export const mutated = (s: string) =>
  fc.tuple(fc.nat({ max: s.length - 1 }), fc.constantFrom(...'0aZ_9.-A'.split(''))).map(([i, c]) => s.slice(0, i) + c + s.slice(i + 1));

/**
 * Content types: mostly JSON ones, some that are not (`refused`, weighted `refusedWeight`, with
 * `moreRefused` added), some random text, and absent one time in `absentFreq`.
 */
export const contentTypes = (opts: { refusedWeight?: number; moreRefused?: string[]; absentFreq?: number } = {}) =>
  fc.option(
    fc.oneof(
      {
        weight: 10,
        arbitrary: fc.constantFrom(
          'application/json',
          'application/json; charset=utf-8',
          'APPLICATION/JSON',
          'application/cloudevents+json',
        ),
      },
      {
        weight: opts.refusedWeight ?? 1,
        arbitrary: fc.constantFrom(
          'text/plain',
          'application/x-www-form-urlencoded',
          'multipart/form-data; boundary=x',
          '',
          'application/octet-stream',
          'application/jsonp',
          ...(opts.moreRefused ?? []),
        ),
      },
      { weight: 1, arbitrary: text },
    ),
    { nil: undefined, ...(opts.absentFreq ? { freq: opts.absentFreq } : {}) },
  );
export const contentType = contentTypes();

export const anyQuery = fc.dictionary(fc.string(), fc.string(), { maxKeys: 4 });

export const request = (
  auth: fc.Arbitrary<string | undefined>,
  body: fc.Arbitrary<Body>,
  opts: {
    params?: fc.Arbitrary<Record<string, string> | undefined>;
    query?: fc.Arbitrary<Record<string, string> | undefined>;
    extraHeaders?: fc.Arbitrary<Record<string, string>>;
  } = {},
) =>
  fc
    .record({
      auth,
      apiKeyHeader: fc.option(
        fc.oneof(
          text,
          tokenBody.map((t) => `dyk_${t}`),
        ),
        { nil: undefined, freq: 10 },
      ),
      contentType,
      forwardedFor: fc.option(
        fc.oneof(
          text,
          fc.array(sourceIp, { maxLength: 3 }).map((a) => a.join(', ')),
        ),
        { nil: undefined },
      ),
      query: opts.query ?? fc.option(anyQuery, { nil: undefined }),
      params: opts.params ?? fc.constant(undefined),
      extra: opts.extraHeaders ?? fc.constant({}),
      body,
      sourceIp,
    })
    .map(({ auth, apiKeyHeader, contentType, forwardedFor, query, params, extra, body, sourceIp }): Request => {
      const headers: Record<string, string> = { ...extra };
      if (auth !== undefined) headers.authorization = auth;
      if (apiKeyHeader !== undefined) headers['x-api-key'] = apiKeyHeader;
      if (contentType !== undefined) headers['content-type'] = contentType;
      if (forwardedFor !== undefined) headers['x-forwarded-for'] = forwardedFor;
      return { headers, query, params, body, sourceIp };
    });

/**
 * The path a client sends for a route's template: each `{name}` the request's parameter,
 * percent-encoded as a client must and API Gateway's rawPath keeps it (an id of ` ?` is not a
 * shorter path with a query string). A path without a template is sent as it is.
 */
const pathFor = (template: string, params: Record<string, string> | undefined) =>
  template.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent((params?.[name] ?? '').toWellFormed()));

/**
 * Send the request to the route's template or path, and check the response against the error
 * contract (docs/api.md "Credentials and errors").
 */
export async function check(handler: Handler, method: string, route: string, req: Request, allowed: readonly number[]) {
  const path = pathFor(route, req.params);
  const res = await invoke(
    handler,
    apiEvent({
      method,
      path,
      headers: req.headers,
      ...(req.query ? { query: req.query } : {}),
      ...(req.params ? { params: req.params } : {}),
      ...(req.body.body !== undefined ? { body: req.body.body } : {}),
      isBase64Encoded: req.body.isBase64Encoded,
      sourceIp: req.sourceIp,
    }),
  );
  const sent = `${JSON.stringify(req.params ?? {})} ${JSON.stringify(req.query ?? {}).slice(0, 300)} ${req.body.body?.slice(0, 300)}`;
  const what = `${method} ${path} ${sent} -> ${res.status} ${res.body?.slice(0, 300)}`;
  expect(res.status, what).toBeLessThan(500);
  expect(allowed, what).toContain(res.status);
  expect(res.headers['x-request-id'], what).toEqual(expect.any(String));
  if (res.status >= 400) {
    expect(res.headers['content-type'], what).toBe('application/problem+json');
    expect(res.json, what).toMatchObject({
      type: expect.any(String),
      title: expect.any(String),
      status: res.status,
      requestId: expect.any(String),
    });
    expect(res.json.code, what).toMatch(/^[A-Z][A-Z0-9_]*$/);
    expect(res.json.requestId, what).toBe(res.headers['x-request-id']);
    if (res.status === 401) expect(res.headers['www-authenticate'], what).toBe('Bearer');
    if (res.status === 429) expect(Number(res.headers['retry-after']), what).toBeGreaterThan(0);
    if (res.json.code === 'VALIDATION_FAILED') expect(res.json.errors, what).toEqual(expect.any(Array));
  }
  return res;
}
