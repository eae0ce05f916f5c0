import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { handler as login } from '../../functions/http/auth/login.ts';
import { handler as createHandler } from '../../functions/http/secrets/create.ts';
import { handler as deleteHandler } from '../../functions/http/secrets/delete.ts';
import { handler as listHandler } from '../../functions/http/secrets/list.ts';
import { handler as updateHandler } from '../../functions/http/secrets/update.ts';
import { givenAccount, PASSWORD } from '../support/fixtures.ts';
import { apiEvent, invoke } from '../support/http.ts';
import { anyUnits, b64, type Body, check, good, mutated, request, runsWith, serialize, text, tokenBody } from '../support/properties.ts';

/**
 * Whatever a client sends to the account-secrets routes, the answer is a 2xx or a 4xx problem
 * document, never a 5xx; and no answer ever carries a value. Real emulators, whole middleware stack.
 */

const RUNS = { numRuns: 100 } as const;
const name = fc.stringMatching(/^[A-Z][A-Z0-9_]{0,63}$/);
const badName = fc.oneof(text, fc.constantFrom('', 'lower', '1A', '_A', 'A-B', `A${'B'.repeat(64)}`, 'SECRET#X', 'A B', 'ÄB'));
const secretValue = fc.oneof(
  fc.string({ minLength: 1, maxLength: 200 }),
  anyUnits(200), // lone surrogates included
  fc.constantFrom('x'.repeat(8192), 'x'.repeat(8193), '€'.repeat(2731), '\u0000', ' '),
);

const hostPattern = fc.oneof(
  fc.domain(),
  fc.domain().map((d) => `*.${d}`),
  fc.constantFrom('*.', '*', 'a.*.b', 'https://x.example', 'x'.repeat(254), '', ' API.Example.COM. ', '127.0.0.1', '[::1]'),
  text,
);
const allowedHosts = fc.oneof(fc.array(hostPattern, { maxLength: 22 }), fc.constant(null), fc.jsonValue());
const members = fc.oneof(fc.constantFrom('use', 'none'), fc.constantFrom('USE', 'all', ''), fc.jsonValue());
const VIEW_KEYS = ['allowedHosts', 'createdAt', 'lastUsedAt', 'members', 'name', 'updatedAt'];

const bodies = (shaped: fc.Arbitrary<unknown>): fc.Arbitrary<Body> =>
  fc.oneof(
    fc.constant<Body>({ isBase64Encoded: false }),
    fc.json().map((body) => ({ body, isBase64Encoded: false })),
    text.map((body) => ({ body, isBase64Encoded: false })),
    fc.anything().map((v) => ({ body: serialize(v), isBase64Encoded: false })),
    fc.uint8Array({ maxLength: 600 }).map((u) => ({ body: b64(u), isBase64Encoded: true })),
    { weight: 8, arbitrary: shaped.map((v) => ({ body: serialize(v), isBase64Encoded: false })) },
    { weight: 2, arbitrary: shaped.map((v) => ({ body: b64(serialize(v)), isBase64Encoded: true })) },
    fc
      .integer({ min: 60_000, max: 70_000 })
      .map((n) => ({ body: JSON.stringify({ name: 'BIG', value: 'x'.repeat(n) }), isBase64Encoded: false })),
  );

describe('no request makes an account-secrets handler answer 5xx', () => {
  let adminSession: string;
  let memberSession: string;

  beforeAll(async () => {
    const account = await givenAccount();
    const session = async (email: string, ip: string) => {
      const res = await invoke(
        login,
        apiEvent({ method: 'POST', path: '/api/auth/login', body: { email, password: PASSWORD }, sourceIp: ip }),
      );
      expect(res.status).toBe(200);
      return res.json.token as string;
    };
    [adminSession, memberSession] = await Promise.all([
      session(account.admin.email, '192.0.2.211'),
      session(account.member.email, '192.0.2.212'),
    ]);
    for (const n of ['KNOWN', 'KNOWN_2']) {
      const res = await check(
        createHandler,
        'POST',
        '/api/secrets',
        good(`Bearer ${adminSession}`, { json: { name: n, value: 'v' } }),
        [201],
      );
      expect(res.json.name).toBe(n);
    }
  });

  const sessionAuth = () =>
    fc.option(
      fc.oneof(
        { weight: 12, arbitrary: fc.constantFrom(`Bearer ${adminSession}`, `Bearer ${memberSession}`) },
        text,
        tokenBody.map((t) => `Bearer dys_${t}`),
        mutated(adminSession).map((t) => `Bearer ${t}`),
        fc.constantFrom('Bearer', '', `Bearer ${adminSession} extra`),
      ),
      { nil: undefined, freq: 8 },
    );
  const nameParams = fc.option(
    fc.oneof(
      { weight: 4, arbitrary: fc.oneof(fc.constantFrom('KNOWN', 'KNOWN_2', 'MISSING'), name, badName).map((n) => ({ name: n })) },
      fc.dictionary(fc.string(), fc.string(), { maxKeys: 3 }),
    ),
    { nil: undefined, freq: 8 },
  );

  /** The secrets the account has: the two made before, and every one the POST property creates. */
  const existing = new Set(['KNOWN', 'KNOWN_2']);

  it('POST /api/secrets', async () => {
    const shaped = fc.oneof(
      { weight: 3, arbitrary: fc.record({ name: fc.oneof(name, fc.constant('KNOWN')), value: secretValue }) },
      fc.record({ name: fc.oneof(name, badName, fc.jsonValue()), value: fc.oneof(secretValue, fc.jsonValue()) }),
      fc.record({ name: fc.oneof(name, badName), value: secretValue, extra: fc.jsonValue() }, { requiredKeys: [] }),
      {
        weight: 3,
        arbitrary: fc.record({ name, value: secretValue, allowedHosts, members }, { requiredKeys: ['name', 'value'] }),
      },
    );
    let created = 0;
    await fc.assert(
      fc.asyncProperty(request(sessionAuth(), bodies(shaped)), async (req) => {
        const res = await check(createHandler, 'POST', '/api/secrets', req, [201, 400, 401, 403, 409, 413, 415]);
        if (res.status === 201) {
          created++;
          existing.add(res.json.name);
          expect(Object.keys(res.json).sort()).toEqual(VIEW_KEYS);
          expect(res.headers.location).toBe(`/api/secrets/${res.json.name}`);
        }
      }),
      runsWith(RUNS, good(`Bearer ${adminSession}`, { json: { name: 'FROM_EXAMPLE', value: 'v' } })),
    );
    expect(created).toBeGreaterThan(0);
  });

  it('PUT /api/secrets/{name}', async () => {
    const shaped = fc.oneof(
      { weight: 3, arbitrary: fc.record({ value: secretValue }) },
      fc.record({ value: fc.oneof(secretValue, fc.jsonValue()), extra: fc.jsonValue() }, { requiredKeys: [] }),
      { weight: 3, arbitrary: fc.record({ value: secretValue, allowedHosts, members }, { requiredKeys: [] }) },
    );
    let replaced = 0;
    await fc.assert(
      fc.asyncProperty(request(sessionAuth(), bodies(shaped), { params: nameParams }), async (req) => {
        const path = '/api/secrets/{name}';
        const res = await check(updateHandler, 'PUT', path, req, [200, 400, 401, 403, 404, 413, 415]);
        if (res.status === 200) {
          replaced++;
          // A secret that exists: made before, or by the POST property above (random names too).
          expect(existing.has(res.json.name), res.json.name).toBe(true);
          expect(Object.keys(res.json).sort()).toEqual(VIEW_KEYS);
        }
      }),
      runsWith(RUNS, good(`Bearer ${adminSession}`, { params: { name: 'KNOWN' }, json: { value: 'new' } })),
    );
    expect(replaced).toBeGreaterThan(0);
  });

  it('GET /api/secrets and DELETE /api/secrets/{name}', async () => {
    await fc.assert(
      fc.asyncProperty(request(sessionAuth(), bodies(fc.jsonValue())), async (req) => {
        const res = await check(listHandler, 'GET', '/api/secrets', req, [200, 401, 413]);
        if (res.status === 200) expect(res.body).not.toMatch(/"(value|ct|edk)"/);
      }),
      { numRuns: 40 },
    );
    await fc.assert(
      fc.asyncProperty(request(sessionAuth(), bodies(fc.jsonValue()), { params: nameParams }), async (req) => {
        const path = '/api/secrets/{name}';
        const res = await check(deleteHandler, 'DELETE', path, req, [204, 401, 403, 404, 413]);
        if (res.status === 204) expect(res.body ?? '').toBe('');
      }),
      RUNS,
    );
  });
});
