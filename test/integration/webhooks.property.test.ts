import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import ipaddr from 'ipaddr.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { handler as createHandler } from '../../functions/http/webhooks/create.ts';
import { handler as getHandler } from '../../functions/http/webhooks/get.ts';
import { handler as updateHandler } from '../../functions/http/webhooks/update.ts';
import { createWorkflow } from '../../shared/domain/workflows.ts';
import { WorkflowDefinition } from '../../shared/engine/definition.ts';
import { WebhookView } from '../../shared/schemas/webhooks.ts';
import { givenAccount } from '../support/fixtures.ts';
import { apiEvent, bearer, invoke } from '../support/http.ts';
import { sessionOf } from '../support/sessions.ts';

/**
 * Whatever a console client sends to create or update a webhook, the answer is a 2xx or a 4xx
 * problem document (never a 5xx), a refused update changes nothing, and source IP allowlist entries
 * are accepted exactly when they are an IPv4 address in dotted four-part decimal, an IPv6 address,
 * or a CIDR range of either (docs/webhooks.md, spec "Webhook" fields and "Limits").
 */

// ---- The allowlist oracle (independent of the schema under test) ----------------------------------

const isV4 = (s: string) => ipaddr.IPv4.isValidFourPartDecimal(s);
/** An IPv6 address; an embedded IPv4 tail (x:x:x:x:x:x:d.d.d.d, RFC 4291 §2.2) must be dotted decimal too. */
const isV6 = (s: string) => {
  if (!s.includes(':') || !ipaddr.IPv6.isValid(s)) return false;
  const tail = s.slice(s.lastIndexOf(':') + 1);
  return !tail.includes('.') || isV4(tail);
};
/** Accepted iff an IPv4 (four-part decimal, 0..255, no leading zeros), an IPv6, or either with a valid prefix. */
function acceptedEntry(entry: string): boolean {
  const parts = entry.split('/');
  if (parts.length === 1) return isV4(entry) || isV6(entry);
  if (parts.length !== 2) return false;
  const [addr = '', prefix = ''] = parts;
  if (!/^[0-9]{1,3}$/.test(prefix)) return false;
  const bits = Number(prefix);
  // An IPv4-mapped range wider than /96 reaches beyond IPv4-mapped space: refused by design.
  if (isV6(addr) && (ipaddr.parse(addr) as ipaddr.IPv6).isIPv4MappedAddress() && bits < 96) return false;
  return (isV4(addr) && bits <= 32) || (isV6(addr) && bits <= 128);
}

// ---- Generators ----------------------------------------------------------------------------------

const octet = fc.integer({ min: 0, max: 255 });
/** Dotted quads that are almost right: out of range, leading zeros, too few or too many parts. */
const nearV4 = fc.oneof(
  fc.tuple(fc.integer({ min: 0, max: 999 }), octet, octet, octet).map((p) => p.join('.')),
  fc.tuple(octet, octet, octet, octet, fc.nat(3)).map(([a, b, c, d, i]) => {
    const p = [a, b, c, d].map(String);
    p[i] = `0${p[i]}`;
    return p.join('.');
  }),
  fc.array(octet, { minLength: 1, maxLength: 6 }).map((p) => p.join('.')),
);
const v4 = fc.oneof({ weight: 4, arbitrary: fc.ipV4() }, fc.ipV4Extended(), nearV4);
const v6 = fc.oneof(
  { weight: 3, arbitrary: fc.ipV6() },
  {
    // IPv4-mapped / embedded forms, with decimal and non-decimal (hex, octal, short) IPv4 tails.
    weight: 2,
    arbitrary: fc
      .tuple(
        fc.constantFrom('::ffff:', '::', '64:ff9b::', '2001:db8:0:0:0:0:', '1:2:3:4:5:6:7:'),
        fc.oneof(fc.ipV4(), fc.ipV4Extended(), nearV4),
      )
      .map(([h, t]) => h + t),
  },
  fc.constantFrom('::', '::1', '1::', '1::2::3', ':::', '12345::', 'g::1', '1:2:3:4:5:6:7:8:9', 'fe80::'),
);
const addr = fc.oneof(v4, v6);
const prefix = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: -1, max: 140 }).map(String) },
  fc.constantFrom('', '032', '08', '0000', '+8', ' 8', '8 ', '1e1', '0x10', '3.2'),
  fc.string({ maxLength: 4 }),
);
const cidr = fc.tuple(addr, prefix).map(([a, p]) => `${a}/${p}`);
const junk = fc.oneof(
  fc.string(),
  fc.string({ unit: 'binary', maxLength: 20 }),
  fc.constantFrom('127.1', '017700000001', '0x7f.0.0.1', '1.2.3.4/33', '300.1.1.1', 'abc', '10.0.0.0/8/1', 'localhost', '*', ''),
  fc.tuple(fc.oneof(addr, cidr), fc.constantFrom(' ', '\t', '\n', '/', '//', '.', ':')).map(([a, w]) => `${w}${a}`),
  fc.tuple(fc.oneof(addr, cidr), fc.constantFrom(' ', '\t', '\n', '/', '//', '.', ':')).map(([a, w]) => `${a}${w}`),
  fc.tuple(addr, addr).map(([a, b]) => `${a}/${b}`),
);
/** A valid-looking entry with one character inserted, removed or replaced. */
const mutated = fc
  .tuple(fc.oneof(addr, cidr), fc.nat(), fc.constantFrom('0', '1', '9', 'a', 'f', 'x', ':', '.', '/', ' ', '%'), fc.nat(2))
  .map(([s, at, c, op]) => {
    const i = s.length ? at % s.length : 0;
    return op === 0 ? s.slice(0, i) + c + s.slice(i) : op === 1 ? s.slice(0, i) + s.slice(i + 1) : s.slice(0, i) + c + s.slice(i + 1);
  })
  // Zone ids (`fe80::1%eth0`) are outside what this oracle decides.
  .filter((s) => !s.includes('%'));
const entry = fc.oneof(
  { weight: 4, arbitrary: addr },
  { weight: 4, arbitrary: cidr },
  { weight: 2, arbitrary: junk },
  { weight: 2, arbitrary: mutated },
);
/** Lists: short mixed ones, and ones around the 100-entry limit. */
const entryList = fc.oneof(
  { weight: 6, arbitrary: fc.array(entry, { maxLength: 6 }) },
  {
    weight: 1,
    arbitrary: fc.tuple(fc.integer({ min: 98, max: 103 }), fc.array(fc.tuple(fc.nat(), entry), { maxLength: 2 })).map(([n, inserts]) => {
      const list = Array.from({ length: n }, (_, i) => `10.${i % 256}.0.0/16`);
      for (const [at, e] of inserts) list[at % n] = e;
      return list;
    }),
  },
);

const serialize = (v: unknown) => {
  try {
    return JSON.stringify(v) ?? 'undefined';
  } catch {
    return '[unserializable]';
  }
};

// ---- Fixture -------------------------------------------------------------------------------------

const DEFINITION = WorkflowDefinition.parse({ steps: [{ id: 'greet', type: 'set', values: { greeting: 'hello' } }] });
/** Secrets the bodies may carry; none may ever appear in a response. */
const SECRETS = Array.from({ length: 3 }, () => `whsecret-${randomBytes(12).toString('hex')}`);
const ALLOWED_CODES = [
  'VALIDATION_FAILED',
  'CREDENTIALS_REQUIRED',
  'SECRET_REQUIRED',
  'INVALID_JSON',
  'BODY_NOT_OBJECT',
  'INVALID_API_KEY_BINDING',
  'NOT_WORKFLOW_EDITOR',
  'WORKFLOW_NOT_FOUND',
  'PLAN_LIMIT_REACHED',
  'PAYLOAD_TOO_LARGE',
];
const RUNS = { numRuns: 100 } as const;
/** Always-checked lists: the brief's examples, and forms random runs found or may miss. */
const KNOWN_EXAMPLES: [string[]][] = [
  [['1.2.3.4', '10.0.0.0/8', '2001:db8::1', '2001:db8::/32', '::ffff:7f00:1']],
  [['127.1', '017700000001', '0x7f.0.0.1', '1.2.3.4/33', '300.1.1.1', 'abc', '10.0.0.0/8/1']],
  [['::ffff:0x7f.0.0.1']],
  [['::ffff:00.0.0.0/0']],
];

type Res = Awaited<ReturnType<typeof invoke>>;
type Body = string | undefined;

/** The error contract (docs/api.md "Credentials and errors") and the secret rule, for any response. */
function checkResponse(res: Res, allowed: readonly number[], what: string) {
  const msg = `${what} -> ${res.status} ${res.body?.slice(0, 400)}`;
  expect(res.status, msg).toBeLessThan(500);
  expect(allowed, msg).toContain(res.status);
  for (const s of SECRETS) expect(res.body ?? '', msg).not.toContain(s);
  if (res.status >= 400) {
    expect(res.headers['content-type'], msg).toBe('application/problem+json');
    expect(res.json, msg).toMatchObject({ type: expect.any(String), title: expect.any(String), status: res.status });
    expect(res.json.code, msg).toMatch(/^[A-Z][A-Z0-9_]*$/);
    expect(ALLOWED_CODES, msg).toContain(res.json.code);
    if (res.json.code === 'VALIDATION_FAILED') expect(res.json.errors, msg).toEqual(expect.any(Array));
  } else {
    expect(WebhookView.parse(res.json), msg).toEqual(res.json);
    const mode = res.json.apiKeyId ? 'api_key' : res.json.hasSecretKey ? 'hmac' : 'open';
    expect(res.json.authMode, msg).toBe(mode);
  }
}

const allowlistPaths = (res: Res) =>
  ((res.json?.errors ?? []) as { path: string }[])
    .map((e) => e.path)
    .filter((p) => p === 'allowedSourceIps' || p.startsWith('allowedSourceIps.'));

/** The refused entries' paths, as the oracle sees them. */
const refusedPaths = (list: readonly string[]) => list.flatMap((e, i) => (acceptedEntry(e) ? [] : [`allowedSourceIps.${i}`]));

/**
 * A refused list names its faults: every refused entry at `allowedSourceIps.<i>` and nothing else;
 * over 100 entries, `allowedSourceIps` itself (the entries' own faults may then be left out).
 */
function expectAllowlistErrors(res: Res, list: readonly string[], what: string) {
  const got = allowlistPaths(res).sort();
  const refused = refusedPaths(list).sort();
  if (list.length <= 100) return expect(got, what).toEqual(refused);
  expect(got, what).toContain('allowedSourceIps');
  for (const p of got.filter((x) => x !== 'allowedSourceIps')) expect(refused, what).toContain(p);
}
const listAccepted = (list: readonly string[]) => list.length <= 100 && refusedPaths(list).length === 0;

describe('webhook management never answers 5xx and validates as specified', () => {
  let t: Awaited<ReturnType<typeof givenAccount>>;
  let other: Awaited<ReturnType<typeof givenAccount>>;
  let adminSession: string;
  let memberSession: string;
  let adminWf: string;
  let memberWf: string;
  let otherWf: string;

  const create = (s: string, body: Body) =>
    invoke(createHandler, apiEvent({ method: 'POST', path: '/api/webhooks', headers: bearer(s), ...(body !== undefined ? { body } : {}) }));
  const update = (s: string, id: string, body: Body) =>
    invoke(
      updateHandler,
      apiEvent({ method: 'PUT', path: `/api/webhooks/${id}`, headers: bearer(s), params: { id }, ...(body !== undefined ? { body } : {}) }),
    );
  const read = async (id: string) =>
    (await invoke(getHandler, apiEvent({ path: `/api/webhooks/${id}`, headers: bearer(adminSession), params: { id } }))).json;

  beforeAll(async () => {
    // Enterprise: no plan limit gets in the way of the many creates.
    [t, other] = await Promise.all([givenAccount({ plan: 'enterprise' }), givenAccount({ plan: 'enterprise' })]);
    [adminSession, memberSession] = await Promise.all([sessionOf(t.admin.email), sessionOf(t.member.email)]);
    const wf = (u: { accountId: string; userId: string; role: 'admin' | 'member' }) =>
      createWorkflow(u, { name: 'wf', definition: DEFINITION, recovery: false, editors: [] }).then((w) => w.workflowId);
    [adminWf, memberWf, otherWf] = await Promise.all([wf(t.admin), wf(t.member), wf(other.admin)]);
  });

  const text = fc.oneof(fc.string(), fc.string({ unit: 'binary', maxLength: 30 }));
  const ulidish = fc.stringMatching(/^[0-9a-z]{26}$/);
  const varName = fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,10}$/);
  const variableMapping = fc.oneof(
    fc.dictionary(varName, fc.string({ minLength: 1, maxLength: 20 }), { maxKeys: 5 }),
    fc.dictionary(fc.oneof(text, fc.constantFrom('__proto__', 'constructor', 'toString', 'hasOwnProperty')), fc.jsonValue(), {
      maxKeys: 5,
    }),
    fc.object({ maxDepth: 2 }),
    fc.jsonValue(),
    fc.constant(null),
  );
  const secretKey = fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...SECRETS) }, text, fc.jsonValue());
  const signatureScheme = fc.oneof({ weight: 3, arbitrary: fc.constantFrom('legacy-hmac', 'github', 'stripe', 'slack') }, fc.jsonValue());
  const authMode = fc.oneof({ weight: 3, arbitrary: fc.constantFrom('open', 'api_key', 'hmac') }, fc.jsonValue());
  const allowedSourceIps = fc.oneof({ weight: 3, arbitrary: entryList }, fc.array(fc.string(), { maxLength: 5 }), fc.jsonValue());
  const enabled = fc.oneof({ weight: 3, arbitrary: fc.boolean() }, fc.jsonValue());
  const apiKeyId = () =>
    fc.oneof({ weight: 3, arbitrary: fc.constantFrom(t.adminKey.id, t.memberKey.id, other.adminKey.id) }, ulidish, text, fc.jsonValue());
  const name = fc.oneof(
    { weight: 3, arbitrary: fc.string({ minLength: 1, maxLength: 30 }) },
    text,
    fc.jsonValue(),
    fc.constant('x'.repeat(201)),
  );

  /** Bodies: JSON text, anything serialised, and webhook-shaped objects with arbitrary fields. */
  const bodies = (shaped: fc.Arbitrary<unknown>): fc.Arbitrary<Body> =>
    fc.oneof(fc.constant(undefined), fc.json(), fc.anything().map(serialize), text, { weight: 8, arbitrary: shaped.map(serialize) });

  it('POST /api/webhooks with arbitrary bodies', async () => {
    const shaped = fc.record(
      {
        workflowId: fc.oneof(
          { weight: 4, arbitrary: fc.constantFrom(adminWf, memberWf, otherWf) },
          ulidish.map((u) => `wf_${u}`),
          text,
          fc.jsonValue(),
        ),
        name,
        apiKeyId: apiKeyId(),
        secretKey,
        signatureScheme,
        authMode,
        variableMapping,
        allowedSourceIps,
        enabled,
        extra: fc.jsonValue(),
      },
      { requiredKeys: [] },
    );
    // Mostly well-formed bodies, so that creates also succeed (with every optional field in play).
    const wellFormed = fc.record(
      {
        workflowId: fc.constantFrom(adminWf, memberWf),
        name: fc.string({ minLength: 1, maxLength: 30 }).filter((s) => s.trim() !== ''),
        apiKeyId: fc.constantFrom(t.adminKey.id, t.memberKey.id),
        secretKey: fc.constantFrom(...SECRETS),
        signatureScheme: fc.constantFrom('legacy-hmac', 'github', 'stripe', 'slack'),
        authMode: fc.constantFrom('open', 'api_key', 'hmac'),
        variableMapping: fc.dictionary(varName, fc.string({ minLength: 1, maxLength: 20 }), { maxKeys: 4 }),
        allowedSourceIps: fc.array(fc.oneof(fc.ipV4(), fc.ipV6(), cidr), { maxLength: 4 }),
        enabled: fc.boolean(),
      },
      { requiredKeys: ['workflowId', 'name'] },
    );
    let created = 0;
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('admin', 'member'), fc.oneof(bodies(shaped), wellFormed.map(serialize)), async (who, body) => {
        const res = await create(who === 'admin' ? adminSession : memberSession, body);
        checkResponse(res, [201, 400, 403, 404, 413], `POST as ${who} ${body?.slice(0, 300)}`);
        if (res.status === 201) {
          created++;
          expect(res.headers.location).toBe(`/api/webhooks/${res.json.id}`);
          const sent = JSON.parse(body as string);
          expect(res.json).toMatchObject({ workflowId: sent.workflowId, apiKeyId: sent.apiKeyId ?? null });
          expect(res.json.allowedSourceIps).toEqual(sent.allowedSourceIps ?? []);
          expect((sent.allowedSourceIps ?? []).every(acceptedEntry)).toBe(true);
          // Open only on purpose; a requested mode is the one it got; a scheme only with a secret.
          expect(res.json.open).toBe(res.json.authMode === 'open');
          if (res.json.authMode === 'open') expect(sent.authMode).toBe('open');
          if (sent.authMode !== undefined) expect(res.json.authMode).toBe(sent.authMode);
          if (sent.signatureScheme !== undefined) expect(res.json.hasSecretKey).toBe(true);
        }
      }),
      // A well-formed create first, so the success path runs whatever the random bodies are.
      { ...RUNS, examples: [['admin', JSON.stringify({ workflowId: adminWf, name: 'example', authMode: 'open' })]] },
    );
    expect(created).toBeGreaterThan(0);
  });

  it('PUT /api/webhooks/{id} with arbitrary bodies: a refused update changes nothing', async () => {
    const start = await create(memberSession, JSON.stringify({ workflowId: memberWf, name: 'target', apiKeyId: t.memberKey.id }));
    expect(start.status).toBe(201);
    const id = start.json.id as string;
    const shaped = fc.record(
      {
        name,
        apiKeyId: apiKeyId(),
        clearApiKeyId: fc.oneof({ weight: 3, arbitrary: fc.boolean() }, fc.jsonValue()),
        secretKey,
        signatureScheme,
        authMode,
        variableMapping,
        allowedSourceIps,
        enabled,
        extra: fc.jsonValue(),
      },
      { requiredKeys: [] },
    );
    // Mostly well-formed patches, so that updates also succeed.
    const wellFormed = fc
      .record(
        {
          name: fc.string({ minLength: 1, maxLength: 30 }).filter((s) => s.trim() !== ''),
          apiKeyId: fc.constantFrom(t.adminKey.id, t.memberKey.id),
          clearApiKeyId: fc.boolean(),
          secretKey: fc.constantFrom(...SECRETS),
          signatureScheme: fc.constantFrom('legacy-hmac', 'github', 'stripe', 'slack'),
          authMode: fc.constantFrom('open', 'api_key', 'hmac'),
          variableMapping: fc.option(fc.dictionary(varName, fc.string({ minLength: 1, maxLength: 20 }), { maxKeys: 4 }), { nil: null }),
          allowedSourceIps: fc.array(fc.oneof(fc.ipV4(), fc.ipV6(), cidr), { maxLength: 4 }),
          enabled: fc.boolean(),
        },
        { requiredKeys: [] },
      )
      .map(serialize);
    let updated = 0;
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('admin', 'member'), fc.oneof(bodies(shaped), wellFormed), async (who, body) => {
        const before = await read(id);
        const res = await update(who === 'admin' ? adminSession : memberSession, id, body);
        checkResponse(res, [200, 400, 413], `PUT as ${who} ${body?.slice(0, 300)}`);
        const after = await read(id);
        if (res.status !== 200) {
          expect(after).toEqual(before);
          return;
        }
        updated++;
        expect(after).toEqual(res.json);
        const sent = JSON.parse(body as string);
        // Cleared: HMAC with the secret sent along, or open when that is asked for (the schema requires one of the two).
        if (sent.clearApiKeyId === true)
          expect(res.json).toMatchObject(
            sent.authMode === 'open' ? { apiKeyId: null, authMode: 'open' } : { apiKeyId: null, hasSecretKey: true, authMode: 'hmac' },
          );
        if (sent.allowedSourceIps !== undefined) expect(res.json.allowedSourceIps).toEqual(sent.allowedSourceIps);
        if (sent.authMode !== undefined) expect(res.json.authMode).toBe(sent.authMode);
        // Never open unless asked for (the webhook starts bound to a key).
        if (res.json.authMode === 'open') expect(sent.authMode === 'open' || before.authMode === 'open').toBe(true);
        expect(res.json).toMatchObject({ id, createdAt: before.createdAt, createdBy: t.member.userId, workflowId: memberWf });
      }),
      { ...RUNS, examples: [['member', JSON.stringify({ name: 'renamed' })]] },
    );
    expect(updated).toBeGreaterThan(0);
  });

  it('allowedSourceIps on create: accepted exactly when every entry passes the oracle and there are at most 100', async () => {
    let accepted = 0;
    let refused = 0;
    await fc.assert(
      fc.asyncProperty(entryList, async (list) => {
        const res = await create(
          adminSession,
          JSON.stringify({ workflowId: adminWf, name: 'ips', authMode: 'open', allowedSourceIps: list }),
        );
        const what = `POST allowedSourceIps=${JSON.stringify(list.length > 10 ? list.filter((e) => !acceptedEntry(e)) : list)} (${list.length})`;
        checkResponse(res, [201, 400], what);
        if (listAccepted(list)) {
          expect(res.status, `${what}: ${res.body}`).toBe(201);
          expect(res.json.allowedSourceIps).toEqual(list);
          accepted++;
        } else {
          expect(res.status, `${what}: ${res.body}`).toBe(400);
          expectAllowlistErrors(res, list, what);
          refused++;
        }
      }),
      { ...RUNS, examples: KNOWN_EXAMPLES },
    );
    expect(accepted).toBeGreaterThan(0);
    expect(refused).toBeGreaterThan(0);
  });

  it('allowedSourceIps on update: the same oracle, and a refused list leaves the stored one', async () => {
    const start = await create(
      adminSession,
      JSON.stringify({ workflowId: adminWf, name: 'ips', authMode: 'open', allowedSourceIps: ['192.0.2.1'] }),
    );
    expect(start.status).toBe(201);
    const id = start.json.id as string;
    await fc.assert(
      fc.asyncProperty(entryList, async (list) => {
        const before = await read(id);
        const res = await update(adminSession, id, JSON.stringify({ allowedSourceIps: list }));
        const what = `PUT allowedSourceIps=${JSON.stringify(list.length > 10 ? list.filter((e) => !acceptedEntry(e)) : list)} (${list.length})`;
        checkResponse(res, [200, 400], what);
        if (listAccepted(list)) {
          expect(res.status, `${what}: ${res.body}`).toBe(200);
          expect((await read(id)).allowedSourceIps).toEqual(list);
        } else {
          expect(res.status, `${what}: ${res.body}`).toBe(400);
          expectAllowlistErrors(res, list, what);
          expect(await read(id)).toEqual(before);
        }
      }),
      { numRuns: 60, examples: KNOWN_EXAMPLES },
    );
  });

  it('the oracle itself agrees with the documented examples', () => {
    for (const ok of ['1.2.3.4', '10.0.0.0/8', '2001:db8::1', '2001:db8::/32', '::ffff:7f00:1', '::ffff:1.2.3.4', '0.0.0.0/0', '::/128'])
      expect(acceptedEntry(ok), ok).toBe(true);
    for (const bad of [
      '127.1',
      '017700000001',
      '0x7f.0.0.1',
      '1.2.3.4/33',
      '300.1.1.1',
      'abc',
      '10.0.0.0/8/1',
      '::ffff:0x7f.0.0.1',
      '::/129',
      '1.2.3.4/',
    ])
      expect(acceptedEntry(bad), bad).toBe(false);
  });
});
