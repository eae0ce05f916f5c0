import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { handler as login } from '../../functions/http/auth/login.ts';
import { handler as createKeyHandler } from '../../functions/http/keys/create.ts';
import { handler as listKeysHandler } from '../../functions/http/keys/list.ts';
import { handler as revokeKeyHandler } from '../../functions/http/keys/revoke.ts';
import { handler as v1Me } from '../../functions/http/v1/me.ts';
import { resetConfig } from '../../shared/config.ts';
import { ALL_SCOPES, createKey } from '../../shared/domain/keys.ts';
import { givenAccount, PASSWORD } from '../support/fixtures.ts';
import { apiEvent, invoke } from '../support/http.ts';
import { type Body, good, type Request, runsWith } from '../support/properties.ts';

/**
 * Whatever a client sends, the console and v1 handlers answer with a 2xx or a 4xx problem document,
 * never a 5xx. Runs against the real emulators, through the whole middleware stack.
 */

type Handler = Parameters<typeof invoke>[0];

const b64 = (s: string | Uint8Array) => Buffer.from(s).toString('base64');
const serialize = (v: unknown) => {
  try {
    return JSON.stringify(v) ?? 'undefined';
  } catch {
    return '[unserializable]';
  }
};

/** Any UTF-16 code unit, lone surrogates included (they survive JSON as `\ud800` escapes). */
const anyUnits = (maxLength = 40) => fc.string({ unit: fc.nat(0xffff).map((c) => String.fromCharCode(c)), maxLength });
const text = fc.oneof(fc.string(), fc.string({ unit: 'binary' }), anyUnits());
const tokenBody = fc.stringMatching(/^[0-9a-z]{26}_[0-9A-Za-z]{49}$/);
const ulidish = fc.stringMatching(/^[0-9a-z]{26}$/);
const sourceIp = fc.oneof(fc.ipV4(), fc.ipV6());

/** Change one character of a real token: right shape, wrong checksum (or wrong secret). */
const mutated = (token: string) =>
  fc
    .tuple(fc.nat({ max: token.length - 1 }), fc.constantFrom(...'0aZ_9'.split('')))
    .map(([i, c]) => token.slice(0, i) + c + token.slice(i + 1));

const contentType = fc.option(
  fc.oneof(
    {
      weight: 10,
      arbitrary: fc.constantFrom('application/json', 'application/json; charset=utf-8', 'APPLICATION/JSON', 'application/cloudevents+json'),
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        'text/plain',
        'application/x-www-form-urlencoded',
        'multipart/form-data; boundary=x',
        '',
        'application/octet-stream',
        'application/jsonp',
      ),
    },
    { weight: 1, arbitrary: text },
  ),
  { nil: undefined },
);

/** Bodies: JSON, text, anything serialized, raw bytes as base64, route-shaped objects (plain or base64), oversized. */
const bodies = (shaped: fc.Arbitrary<unknown>): fc.Arbitrary<Body> =>
  fc.oneof(
    fc.constant<Body>({ isBase64Encoded: false }),
    fc.json().map((body) => ({ body, isBase64Encoded: false })),
    text.map((body) => ({ body, isBase64Encoded: false })),
    fc.anything().map((v) => ({ body: serialize(v), isBase64Encoded: false })),
    fc.uint8Array({ maxLength: 600 }).map((u) => ({ body: b64(u), isBase64Encoded: true })),
    text.map((s) => ({ body: s, isBase64Encoded: true })),
    { weight: 8, arbitrary: shaped.map((v) => ({ body: serialize(v), isBase64Encoded: false })) },
    { weight: 2, arbitrary: shaped.map((v) => ({ body: b64(serialize(v)), isBase64Encoded: true })) },
    shaped.map((v) => ({ body: b64(serialize(v)), isBase64Encoded: true })),
    fc
      .integer({ min: 4000, max: 70_000 })
      .map((n) => ({ body: JSON.stringify({ email: 'x'.repeat(n), password: 'y' }), isBase64Encoded: false })),
  );

const queries = fc.option(
  fc.oneof(
    fc.dictionary(fc.string(), fc.string(), { maxKeys: 4 }),
    fc.record({ all: fc.oneof(fc.constantFrom('true', 'false', '1', '0', 'yes', 'no', 'on', 'off', '', 'TRUE'), text) }),
  ),
  { nil: undefined },
);

const request = (
  auth: fc.Arbitrary<string | undefined>,
  body: fc.Arbitrary<Body>,
  params: fc.Arbitrary<Record<string, string> | undefined> = fc.constant(undefined),
) =>
  fc
    .record({
      auth,
      apiKeyHeader: fc.option(
        fc.oneof(
          text,
          tokenBody.map((t) => `dyk_${t}`),
        ),
        { nil: undefined },
      ),
      contentType,
      forwardedFor: fc.option(
        fc.oneof(
          text,
          fc.array(sourceIp, { maxLength: 3 }).map((a) => a.join(', ')),
        ),
        { nil: undefined },
      ),
      query: queries,
      params,
      body,
      sourceIp,
    })
    .map(({ auth, apiKeyHeader, contentType, forwardedFor, query, params, body, sourceIp }): Request => {
      const headers: Record<string, string> = {};
      if (auth !== undefined) headers.authorization = auth;
      if (apiKeyHeader !== undefined) headers['x-api-key'] = apiKeyHeader;
      if (contentType !== undefined) headers['content-type'] = contentType;
      if (forwardedFor !== undefined) headers['x-forwarded-for'] = forwardedFor;
      return { headers, query, params, body, sourceIp };
    });

/** Send the request and check the response against the error contract (API.md "Errors"). */
async function check(handler: Handler, method: string, path: string, req: Request, allowed: readonly number[]) {
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
  const what = `${method} ${path} -> ${res.status} ${res.body?.slice(0, 300)}`;
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

const RUNS = { numRuns: 120 } as const;

describe('no request makes a handler answer 5xx', () => {
  let account: Awaited<ReturnType<typeof givenAccount>>;
  let other: Awaited<ReturnType<typeof givenAccount>>;
  let adminSession: string;
  let memberSession: string;
  let spareKeyIds: string[];

  beforeAll(async () => {
    [account, other] = await Promise.all([givenAccount(), givenAccount()]);
    const session = async (email: string, ip: string) => {
      const res = await invoke(
        login,
        apiEvent({ method: 'POST', path: '/api/auth/login', body: { email, password: PASSWORD }, sourceIp: ip }),
      );
      expect(res.status).toBe(200);
      return res.json.token as string;
    };
    [adminSession, memberSession] = await Promise.all([
      session(account.admin.email, '192.0.2.201'),
      session(account.member.email, '192.0.2.202'),
    ]);
    // Keys the DELETE property may revoke without spoiling the keys the other properties use.
    const spares = await Promise.all(
      [account.admin, account.admin, account.member].map((u) =>
        createKey({ accountId: u.accountId, userId: u.userId }, { name: 'spare', scopes: ALL_SCOPES, validityDays: 1 }),
      ),
    );
    spareKeyIds = spares.map((k) => k.id);
  });

  const sessionAuth = () =>
    fc.option(
      fc.oneof(
        { weight: 12, arbitrary: fc.constantFrom(`Bearer ${adminSession}`, `Bearer ${memberSession}`, `bearer   ${adminSession}`) },
        text,
        text.map((s) => `Bearer ${s}`),
        tokenBody.map((t) => `Bearer dys_${t}`),
        tokenBody.map((t) => `Bearer dyk_${t}`),
        mutated(adminSession).map((t) => `Bearer ${t}`),
        fc.constantFrom('Bearer', 'Bearer ', '', `Basic ${b64('a:b')}`, `Bearer ${account.adminKey.token}`, `Bearer ${adminSession} extra`),
      ),
      { nil: undefined, freq: 8 },
    );

  it('POST /api/auth/login', async () => {
    const email = fc.oneof(
      text,
      fc.emailAddress(),
      anyUnits(254),
      fc.constantFrom(other.admin.email, other.member.email.toUpperCase(), ` ${other.admin.email} `),
    );
    const password = fc.oneof(text, fc.constant(PASSWORD), fc.string({ minLength: 200, maxLength: 300 }));
    const shaped = fc.oneof(
      fc.record({ email, password }),
      fc.record({ email, password }, { requiredKeys: [] }),
      fc.record({ email: fc.oneof(email, fc.jsonValue()), password: fc.oneof(password, fc.jsonValue()), extra: fc.jsonValue() }),
    );
    const anyAuth = fc.option(fc.oneof(text, fc.constant(`Bearer ${adminSession}`)), { nil: undefined, freq: 4 });
    await fc.assert(
      fc.asyncProperty(request(anyAuth, bodies(shaped)), async (req) => {
        const res = await check(login, 'POST', '/api/auth/login', req, [200, 400, 401, 413, 415, 429]);
        if (res.status === 200) expect(res.json.token).toMatch(/^dys_[0-9a-z]{26}_[0-9A-Za-z]{49}$/);
      }),
      RUNS,
    );
  });

  it('POST /api/auth/login behind a trusted proxy (the client address comes from X-Forwarded-For)', async () => {
    const saved = process.env.TRUSTED_PROXIES;
    process.env.TRUSTED_PROXIES = '10.0.0.0/8';
    resetConfig();
    try {
      const long = fc.tuple(fc.integer({ min: 500, max: 4000 }), fc.constantFrom('x', '1', 'f:', '\u00e9')).map(([n, c]) => c.repeat(n));
      const hop = fc.oneof(sourceIp, text, long, fc.constantFrom('10.0.0.9', 'unknown', '::ffff:10.1.1.1'));
      const forwardedFor = fc.array(hop, { minLength: 0, maxLength: 4 }).map((a) => a.join(', '));
      const body = fc.record({ email: fc.oneof(fc.emailAddress(), text), password: text });
      await fc.assert(
        fc.asyncProperty(forwardedFor, body, fc.ipV4(), async (xff, b, peerSuffix) => {
          const req: Request = {
            headers: { 'content-type': 'application/json', 'x-forwarded-for': xff },
            body: { body: JSON.stringify(b), isBase64Encoded: false },
            sourceIp: `10.${peerSuffix.split('.').slice(1).join('.')}`,
          };
          await check(login, 'POST', '/api/auth/login', req, [400, 401, 429]);
        }),
        { numRuns: 60 },
      );
    } finally {
      if (saved === undefined) delete process.env.TRUSTED_PROXIES;
      else process.env.TRUSTED_PROXIES = saved;
      resetConfig();
    }
  });

  it('GET /api/v1/me', async () => {
    const keyAuth = fc.option(
      fc.oneof(
        {
          weight: 12,
          arbitrary: fc.constantFrom(
            `Bearer ${account.adminKey.token}`,
            `Bearer ${account.memberKey.token}`,
            `Bearer ${other.adminKey.token}`,
          ),
        },
        text,
        text.map((s) => `Bearer ${s}`),
        tokenBody.map((t) => `Bearer dyk_${t}`),
        tokenBody.map((t) => `Bearer dys_${t}`),
        mutated(account.adminKey.token).map((t) => `Bearer ${t}`),
        fc.constantFrom('Bearer', '', `Bearer ${adminSession}`, `Basic ${b64('a:b')}`),
      ),
      { nil: undefined, freq: 8 },
    );
    const withKeyHeader = request(keyAuth, bodies(fc.jsonValue())).chain((req) =>
      fc.constantFrom(undefined, account.adminKey.token, ` ${account.memberKey.token} `).map((k) => {
        if (k === undefined || req.headers['x-api-key'] !== undefined) return req;
        return { ...req, headers: { ...req.headers, 'x-api-key': k } };
      }),
    );
    let ok = 0;
    await fc.assert(
      fc.asyncProperty(withKeyHeader, async (req) => {
        const res = await check(v1Me, 'GET', '/api/v1/me', req, [200, 401, 403, 413, 429]);
        if (res.status === 200) {
          ok++;
          expect([account.account.accountId, other.account.accountId]).toContain(res.json.accountId);
          expect(res.headers['x-ratelimit-limit']).toEqual(expect.any(String));
        }
      }),
      runsWith(RUNS, good(`Bearer ${account.adminKey.token}`)),
    );
    expect(ok).toBeGreaterThan(0);
  });

  it('GET /api/keys', async () => {
    let ok = 0;
    await fc.assert(
      fc.asyncProperty(request(sessionAuth(), bodies(fc.jsonValue())), async (req) => {
        const res = await check(listKeysHandler, 'GET', '/api/keys', req, [200, 400, 401, 403, 413]);
        if (res.status === 200) {
          ok++;
          expect(res.json.items).toEqual(expect.any(Array));
          expect(JSON.stringify(res.json)).not.toMatch(/dyk_|tokenHash/);
        }
      }),
      runsWith(RUNS, good(`Bearer ${adminSession}`)),
    );
    expect(ok).toBeGreaterThan(0);
  });

  it('POST /api/keys', async () => {
    const shaped = fc.oneof(
      // Valid, with any characters in the name (lone surrogates included).
      {
        weight: 3,
        arbitrary: fc.record({
          name: fc.oneof(fc.string({ minLength: 1, maxLength: 100 }), anyUnits(100)),
          scopes: fc.subarray([...ALL_SCOPES], { minLength: 1 }),
          validityDays: fc.integer({ min: 1, max: 365 }),
        }),
      },
      fc.record({
        name: fc.oneof(text, fc.constantFrom('ci', '  ', 'x'.repeat(100), 'x'.repeat(101))),
        scopes: fc.oneof(
          fc.subarray([...ALL_SCOPES], { minLength: 1 }),
          fc.array(fc.oneof(fc.constantFrom(...ALL_SCOPES), text), { maxLength: 6 }),
          fc.jsonValue(),
        ),
        validityDays: fc.oneof(fc.integer({ min: 1, max: 365 }), fc.integer(), fc.double(), fc.jsonValue()),
      }),
      fc.record(
        {
          name: text,
          scopes: fc.subarray([...ALL_SCOPES], { minLength: 1 }),
          validityDays: fc.integer({ min: -5, max: 400 }),
          extra: fc.jsonValue(),
        },
        { requiredKeys: [] },
      ),
    );
    let created = 0;
    await fc.assert(
      fc.asyncProperty(request(sessionAuth(), bodies(shaped)), async (req) => {
        const res = await check(createKeyHandler, 'POST', '/api/keys', req, [201, 400, 401, 413, 415]);
        if (res.status === 201) {
          created++;
          expect(res.json.token).toMatch(/^dyk_[0-9a-z]{26}_[0-9A-Za-z]{49}$/);
          expect(res.headers.location).toBe(`/api/keys/${res.json.id}`);
        }
      }),
      runsWith(RUNS, good(`Bearer ${adminSession}`, { json: { name: 'ci', scopes: ['WORKFLOW_READ'], validityDays: 30 } })),
    );
    expect(created).toBeGreaterThan(0);
  });

  it('DELETE /api/keys/{id}', async () => {
    const id = fc.oneof(
      { weight: 3, arbitrary: fc.constantFrom(...spareKeyIds, other.adminKey.id, other.memberKey.id) },
      ulidish,
      text,
      fc.constantFrom('', ' ', '%', '..', 'KEY#x', `${spareKeyIds[0]}x`, spareKeyIds[0]!.toUpperCase()),
    );
    const params = fc.option(
      fc.oneof({ weight: 4, arbitrary: id.map((v) => ({ id: v })) }, fc.dictionary(fc.string(), fc.string(), { maxKeys: 3 })),
      { nil: undefined, freq: 8 },
    );
    await fc.assert(
      fc.asyncProperty(request(sessionAuth(), bodies(fc.jsonValue()), params), async (req) => {
        const path = `/api/keys/${req.params?.id ?? ''}`;
        const res = await check(revokeKeyHandler, 'DELETE', path, req, [204, 401, 403, 404, 413]);
        if (res.status === 204) {
          expect(spareKeyIds).toContain(req.params?.id);
          expect(res.body ?? '').toBe('');
        }
      }),
      RUNS,
    );
  });
});
