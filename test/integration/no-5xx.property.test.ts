import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { handler as login } from '../../functions/http/auth/login.ts';
import { handler as createKeyHandler } from '../../functions/http/keys/create.ts';
import { handler as listKeysHandler } from '../../functions/http/keys/list.ts';
import { handler as revokeKeyHandler } from '../../functions/http/keys/revoke.ts';
import { handler as createMemberHandler } from '../../functions/http/members/create.ts';
import { handler as removeMemberHandler } from '../../functions/http/members/remove.ts';
import { handler as updateMemberHandler } from '../../functions/http/members/update.ts';
import { handler as v1Me } from '../../functions/http/v1/me.ts';
import { resetConfig } from '../../shared/config.ts';
import { createUser } from '../../shared/domain/accounts.ts';
import { ALL_SCOPES } from '../../shared/domain/keys.ts';
import { type givenAccount, PASSWORD, uniqueEmail } from '../support/fixtures.ts';
import { givenPropertyAccounts } from '../support/sessions.ts';
import {
  anyUnits,
  b64,
  type Body,
  check,
  good,
  mutated,
  type Request,
  request,
  runsWith,
  serialize,
  sourceIp,
  text,
  tokenBody,
  ulidish,
  deeplyNested,
} from '../support/properties.ts';

/**
 * Whatever a client sends, the console and v1 handlers answer with a 2xx or a 4xx problem document,
 * never a 5xx. Runs against the real emulators, through the whole middleware stack.
 */

/** Bodies: JSON, text, anything serialized, raw bytes as base64, route-shaped objects (plain or base64), oversized. */
const bodies = (shaped: fc.Arbitrary<unknown>): fc.Arbitrary<Body> =>
  fc.oneof(
    fc.constant<Body>({ isBase64Encoded: false }),
    fc.json().map((body) => ({ body, isBase64Encoded: false })),
    { weight: 2, arbitrary: deeplyNested.map((body) => ({ body, isBase64Encoded: false })) },
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

const RUNS = { numRuns: 120 } as const;

describe('no request makes a handler answer 5xx', () => {
  let account: Awaited<ReturnType<typeof givenAccount>>;
  let other: Awaited<ReturnType<typeof givenAccount>>;
  let adminSession: string;
  let memberSession: string;
  let spareKeyIds: string[];

  beforeAll(async () => {
    // Spare keys: ones the DELETE property may revoke without spoiling the keys the other properties use.
    const given = await givenPropertyAccounts({
      spare1: { user: 'admin', scopes: ALL_SCOPES },
      spare2: { user: 'admin', scopes: ALL_SCOPES },
      spare3: { user: 'member', scopes: ALL_SCOPES },
    });
    ({ account, other, adminSession, memberSession } = given);
    spareKeyIds = Object.values(given.keys).map((k) => k.id);
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
      fc.asyncProperty(request(anyAuth, bodies(shaped), { query: queries }), async (req) => {
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
    const withKeyHeader = request(keyAuth, bodies(fc.jsonValue()), { query: queries }).chain((req) =>
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
      fc.asyncProperty(request(sessionAuth(), bodies(fc.jsonValue()), { query: queries }), async (req) => {
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
      fc.asyncProperty(request(sessionAuth(), bodies(shaped), { query: queries }), async (req) => {
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
      fc.asyncProperty(request(sessionAuth(), bodies(fc.jsonValue()), { params, query: queries }), async (req) => {
        const path = '/api/keys/{id}';
        const res = await check(revokeKeyHandler, 'DELETE', path, req, [204, 401, 403, 404, 413]);
        if (res.status === 204) {
          expect(spareKeyIds).toContain(req.params?.id);
          expect(res.body ?? '').toBe('');
        }
      }),
      RUNS,
    );
  });

  const memberIds = async () => {
    // Members these properties may change or remove without spoiling the sessions the others use.
    const spares = await Promise.all([0, 1, 2].map(() => createUser(account.account.accountId, uniqueEmail('spare'), PASSWORD, 'member')));
    const ids = spares.map((u) => u.userId);
    const id = fc.oneof(
      { weight: 3, arbitrary: fc.constantFrom(...ids, other.admin.userId, other.member.userId) },
      ulidish.map((u) => `usr_${u}`),
      text,
      fc.constantFrom('', ' ', '%', '..', 'USER#x', 'ADMINS', `${ids[0]}x`, ids[0]!.toUpperCase(), 'x'.repeat(65)),
    );
    const params = fc.option(
      fc.oneof({ weight: 4, arbitrary: id.map((v) => ({ id: v })) }, fc.dictionary(fc.string(), fc.string(), { maxKeys: 3 })),
      { nil: undefined, freq: 8 },
    );
    return { ids, params };
  };

  it('PUT /api/members/{id}', async () => {
    const { ids, params } = await memberIds();
    const shaped = fc.record(
      {
        role: fc.oneof(fc.constantFrom('admin', 'member'), fc.jsonValue()),
        disabled: fc.oneof(fc.boolean(), fc.jsonValue()),
        restoreKeys: fc.oneof(fc.boolean(), fc.jsonValue()),
        // A few Slack ids the spares compete for: another member's is 409 SLACK_USER_TAKEN.
        slackUserId: fc.oneof(fc.constantFrom('U0SPARE1', 'U0SPARE2', 'W0SPARE3', null), fc.jsonValue()),
        extra: fc.jsonValue(),
      },
      { requiredKeys: [] },
    );
    await fc.assert(
      fc.asyncProperty(request(sessionAuth(), bodies(shaped), { params, query: queries }), async (req) => {
        const path = '/api/members/{id}';
        const res = await check(updateMemberHandler, 'PUT', path, req, [200, 400, 401, 403, 404, 409, 413, 415]);
        if (res.status === 200) expect(ids).toContain(res.json.id);
      }),
      RUNS,
    );
  });

  it('POST /api/members', async () => {
    const shaped = fc.record(
      {
        email: fc.oneof({ weight: 3, arbitrary: fc.constant(null).map(() => uniqueEmail('prop')) }, text, fc.jsonValue()),
        password: fc.oneof({ weight: 3, arbitrary: fc.constant(PASSWORD) }, text, fc.jsonValue()),
        role: fc.oneof(fc.constantFrom('admin', 'member'), fc.jsonValue()),
        slackUserId: fc.oneof(fc.constantFrom('U0CREATE1', 'U0CREATE2'), text, fc.jsonValue()),
        extra: fc.jsonValue(),
      },
      { requiredKeys: [] },
    );
    await fc.assert(
      fc.asyncProperty(request(sessionAuth(), bodies(shaped), { query: queries }), async (req) => {
        await check(createMemberHandler, 'POST', '/api/members', req, [201, 400, 401, 403, 409, 413, 415]);
      }),
      { numRuns: 60 },
    );
  });

  it('DELETE /api/members/{id}', async () => {
    const { ids, params } = await memberIds();
    await fc.assert(
      fc.asyncProperty(request(sessionAuth(), bodies(fc.jsonValue()), { params, query: queries }), async (req) => {
        const path = '/api/members/{id}';
        const res = await check(removeMemberHandler, 'DELETE', path, req, [204, 401, 403, 404, 409, 413]);
        if (res.status === 204) expect(ids).toContain(req.params?.id);
      }),
      RUNS,
    );
  });
});
