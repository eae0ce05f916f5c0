import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handler as triggerHandler } from '../../functions/http/webhooks/trigger.ts';
import { handler as legacyHandler } from '../../functions/http/webhooks/trigger-legacy.ts';
import { resetConfig } from '../../shared/config.ts';
import type { Webhook } from '../../shared/db/entities/webhook.ts';
import { createKey, revokeKey } from '../../shared/domain/keys.ts';
import { createWebhook } from '../../shared/domain/webhooks.ts';
import { createWorkflow } from '../../shared/domain/workflows.ts';
import { WorkflowDefinition } from '../../shared/engine/definition.ts';
import { inRanges, parseRange } from '../../shared/ip-ranges.ts';
import { CreateWebhookBody } from '../../shared/schemas/webhooks.ts';
import { useOwnQueues } from '../support/engine.ts';
import { givenAccount, openUnlessKeyed } from '../support/fixtures.ts';
import { apiEvent, invoke } from '../support/http.ts';
import { contentTypes, deeplyNested, mutated, serialize, text, tokenBody } from '../support/properties.ts';

/**
 * Whatever a client sends to the webhook trigger (both paths, every credential mode, unknown and
 * malformed ids), the answer is one of the documented statuses, never a 5xx; refusals are
 * problem+json with a `code` and the `requestId`; and the mode's credential rule holds (only the
 * bound key, only a correct signature, never past an allowlist or a disabled flag).
 */

const DOCUMENTED = [200, 400, 401, 403, 404, 409, 413, 415, 429];
const MIB = 1024 * 1024;
const SECRET = 'property-hmac-secret-0123456789';
const RUNS = { numRuns: 90 } as const;

/** The canonical and the legacy path (identical behaviour, one implementation). */
const ROUTES = {
  canonical: { path: (id: string) => `/api/webhooks/${id}/trigger`, handler: triggerHandler },
  legacy: { path: (id: string) => `/api/webhook-trigger/${id}`, handler: legacyHandler },
};

// ---- arbitraries -------------------------------------------------------------------------------

const hex = (max: number) => fc.stringMatching(new RegExp(`^[0-9a-fA-F]{0,${max}}$`));

/** A body as the gateway hands it over; `sized` is materialised late so counterexamples stay short. */
type BodySpec = { kind: 'none' } | { kind: 'text'; body: string; b64: boolean } | { kind: 'sized'; bytes: number };

const bodySpec: fc.Arbitrary<BodySpec> = fc.oneof(
  { weight: 2, arbitrary: fc.constant<BodySpec>({ kind: 'none' }) },
  { weight: 6, arbitrary: fc.json().map((body): BodySpec => ({ kind: 'text', body, b64: false })) },
  {
    weight: 6,
    arbitrary: fc.dictionary(fc.string(), fc.jsonValue()).map((o): BodySpec => ({ kind: 'text', body: serialize(o), b64: false })),
  },
  {
    weight: 3,
    arbitrary: fc
      .record(
        { where: fc.jsonValue(), o: fc.jsonValue(), arr: fc.jsonValue(), b: fc.jsonValue(), region: fc.jsonValue(), other: fc.jsonValue() },
        { requiredKeys: [] },
      )
      .map((o): BodySpec => ({ kind: 'text', body: serialize(o), b64: false })),
  },
  { weight: 3, arbitrary: text.map((body): BodySpec => ({ kind: 'text', body, b64: false })) },
  { weight: 2, arbitrary: deeplyNested.map((body): BodySpec => ({ kind: 'text', body, b64: false })) },
  { weight: 2, arbitrary: fc.anything().map((v): BodySpec => ({ kind: 'text', body: serialize(v), b64: false })) },
  {
    weight: 3,
    arbitrary: fc
      .uint8Array({ maxLength: 400 })
      .map((u): BodySpec => ({ kind: 'text', body: Buffer.from(u).toString('base64'), b64: true })),
  },
  { weight: 2, arbitrary: fc.json().map((j): BodySpec => ({ kind: 'text', body: Buffer.from(j).toString('base64'), b64: true })) },
  { weight: 1, arbitrary: text.map((body): BodySpec => ({ kind: 'text', body, b64: true })) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      ...['{', '[1]', '"x"', '3', 'null', '', ' ', '\ufeff{}', '{}'].map((body): BodySpec => ({ kind: 'text', body, b64: false })),
    ),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom<BodySpec>(
      { kind: 'sized', bytes: 300_000 },
      { kind: 'sized', bytes: MIB },
      { kind: 'sized', bytes: MIB + 1 },
      { kind: 'sized', bytes: MIB + 1000 },
    ),
  },
);

/** A JSON object of exactly `bytes` bytes. */
const objectOfSize = (bytes: number) => {
  const head = '{"pad":{"x":"';
  const tail = '"}}';
  return head + 'a'.repeat(bytes - head.length - tail.length) + tail;
};

const materialise = (b: BodySpec): { body?: string; isBase64Encoded: boolean } =>
  b.kind === 'none'
    ? { isBase64Encoded: false }
    : b.kind === 'sized'
      ? { body: objectOfSize(b.bytes), isBase64Encoded: false }
      : { body: b.body, isBase64Encoded: b.b64 };

const rawBytes = (b: { body?: string; isBase64Encoded: boolean }) =>
  b.body === undefined ? Buffer.alloc(0) : Buffer.from(b.body, b.isBase64Encoded ? 'base64' : 'utf8');

// More non-JSON look-alikes, more often, and absent more often than in the shared generator.
const contentType = contentTypes({ refusedWeight: 2, moreRefused: ['application/json+', 'json'], absentFreq: 6 });

const hop = fc.oneof(
  fc.ipV4(),
  fc.ipV6(),
  text,
  fc.constantFrom('10.0.0.9', 'unknown', '::ffff:10.1.1.1', '203.0.113.9', ' ', '999.1.1.1'),
);
const forwardedFor = fc.option(
  fc.oneof(
    fc.array(hop, { maxLength: 5 }).map((a) => a.join(', ')),
    text,
  ),
  { nil: undefined },
);
const sourceIp = fc.oneof(fc.ipV4(), fc.ipV6(), fc.constantFrom('127.0.0.1', '10.1.2.3', '2001:db8::1', '203.0.113.9'));

type SigSpec =
  | { kind: 'valid'; prefix: string; upper: boolean }
  | { kind: 'raw'; value: string }
  | { kind: 'hmacOf'; other: string; prefix: string };
const signature: fc.Arbitrary<SigSpec | undefined> = fc.option(
  fc.oneof(
    {
      weight: 4,
      arbitrary: fc.record({
        kind: fc.constant('valid' as const),
        prefix: fc.constantFrom('', 'sha256=', 'SHA256=', ' sha256='),
        upper: fc.boolean(),
      }),
    },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant('raw' as const), value: hex(200) }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('raw' as const), value: hex(80).map((h) => `sha256=${h}`) }) },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant('raw' as const), value: text }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('hmacOf' as const), other: text, prefix: fc.constantFrom('', 'sha256=') }) },
  ),
  { nil: undefined },
);

type Credentials = { authorization?: string; xApiKey?: string; apiKey?: string };
type Request = {
  route: keyof typeof ROUTES;
  creds: Credentials;
  sig?: SigSpec;
  contentType?: string;
  forwardedFor?: string;
  idempotencyKey?: string;
  body: BodySpec;
  sourceIp: string;
};

// ---- fixtures ----------------------------------------------------------------------------------

type Fixture = {
  boundToken: string;
  tokens: string[];
  key: Webhook;
  hmac: Webhook;
  open: Webhook;
  mapped: Webhook;
  allowlisted: Webhook;
  disabled: Webhook;
};
let fx: Fixture;
const ALLOWLIST = ['10.0.0.0/8', '2001:db8::/32'];

beforeAll(async () => {
  await useOwnQueues({ RATE_LIMITS: JSON.stringify({ team: 1_000_000 }) });
  const [a, other] = await Promise.all([givenAccount(), givenAccount()]);
  const p = { kind: 'session', accountId: a.account.accountId, userId: a.admin.userId, role: 'admin', sessionId: 'x' } as const;
  const newKey = (scopes: ('WEBHOOK_TRIGGER' | 'WORKFLOW_READ')[]) =>
    createKey({ accountId: p.accountId, userId: p.userId }, { name: 'k', scopes, validityDays: 1 });
  const [bound, sameAccount, noScope, revoked] = await Promise.all([
    newKey(['WEBHOOK_TRIGGER']),
    newKey(['WEBHOOK_TRIGGER']),
    newKey(['WORKFLOW_READ']),
    newKey(['WEBHOOK_TRIGGER']),
  ]);
  await revokeKey(p, revoked.id);
  const workflow = await createWorkflow(p, {
    name: 'target',
    definition: WorkflowDefinition.parse({
      variables: { region: { type: 'string', default: 'eu' } },
      steps: [{ id: 'mark', type: 'set', values: { marked: true } }],
    }),
    recovery: false,
    editors: [],
  });
  const hook = (input: Record<string, unknown>) =>
    createWebhook(p, CreateWebhookBody.parse({ workflowId: workflow.workflowId, name: 'hook', ...openUnlessKeyed(input) }));
  const [key, hmac, open, mapped, allowlisted, disabled] = await Promise.all([
    hook({ apiKeyId: bound.id, secretKey: SECRET }),
    hook({ secretKey: SECRET }),
    hook({}),
    hook({ variableMapping: { region: 'where', obj: 'o', list: 'arr', flag: 'b' } }),
    hook({ allowedSourceIps: ALLOWLIST }),
    hook({ apiKeyId: bound.id, enabled: false }),
  ]);
  fx = {
    boundToken: bound.token,
    tokens: [bound.token, sameAccount.token, noScope.token, revoked.token, other.adminKey.token, a.adminKey.token],
    key,
    hmac,
    open,
    mapped,
    allowlisted,
    disabled,
  };
});
afterAll(() => {
  delete process.env.RATE_LIMITS;
  delete process.env.TRUSTED_PROXIES;
  resetConfig();
});

const credential = () =>
  fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(...fx.tokens) },
    { weight: 2, arbitrary: text },
    { weight: 2, arbitrary: tokenBody.map((t) => `dyk_${t}`) },
    { weight: 2, arbitrary: mutated(fx.boundToken) },
    {
      weight: 1,
      arbitrary: fc.constantFrom('', ' ', 'dyk_', `${fx.boundToken} `, `${fx.boundToken}x`, fx.boundToken.replace('dyk_', 'dys_')),
    },
  );

const authorizationHeader = () =>
  fc.oneof(
    { weight: 6, arbitrary: credential().map((t) => `Bearer ${t}`) },
    { weight: 1, arbitrary: credential().map((t) => `bearer \t${t}`) },
    { weight: 1, arbitrary: credential().map((t) => `Basic ${t}`) },
    { weight: 1, arbitrary: fc.constantFrom('Bearer', 'Bearer ', '', `Bearer ${fx.boundToken} extra`) },
    { weight: 1, arbitrary: text },
  );

const requests = (): fc.Arbitrary<Request> =>
  fc.record({
    route: fc.constantFrom('canonical', 'legacy'),
    creds: fc.record(
      {
        authorization: authorizationHeader(),
        xApiKey: credential(),
        apiKey: credential(),
      },
      { requiredKeys: [] },
    ),
    sig: signature,
    contentType,
    forwardedFor,
    idempotencyKey: fc.option(fc.oneof(fc.constantFrom('k1', 'k2'), text), { nil: undefined, freq: 5 }),
    body: bodySpec,
    sourceIp,
  });

/** What the trigger's credential rule looks at: the first present of Bearer, X-API-Key, api_key. */
function firstCredential(c: Credentials): string | undefined {
  if (c.authorization !== undefined) return /^Bearer[ \t]+(\S+)\s*$/i.exec(c.authorization)?.[1] ?? '';
  if (c.xApiKey !== undefined) return c.xApiKey.trim();
  return c.apiKey;
}

const sign = (bytes: Buffer | string) => createHmac('sha256', SECRET).update(bytes).digest('hex');

function signatureHeader(sig: SigSpec | undefined, bytes: Buffer): string | undefined {
  if (!sig) return undefined;
  if (sig.kind === 'raw') return sig.value;
  if (sig.kind === 'hmacOf') return sig.prefix + sign(sig.other);
  const h = sign(bytes);
  return sig.prefix + (sig.upper ? h.toUpperCase() : h);
}

/** Send the request to `webhookId` and check the response against the error contract. */
async function send(webhookId: string, req: Request) {
  const body = materialise(req.body);
  const headers: Record<string, string> = {};
  if (req.creds.authorization !== undefined) headers.authorization = req.creds.authorization;
  if (req.creds.xApiKey !== undefined) headers['x-api-key'] = req.creds.xApiKey;
  const sig = signatureHeader(req.sig, rawBytes(body));
  if (sig !== undefined) headers['x-webhook-signature'] = sig;
  if (req.contentType !== undefined) headers['content-type'] = req.contentType;
  if (req.forwardedFor !== undefined) headers['x-forwarded-for'] = req.forwardedFor;
  if (req.idempotencyKey !== undefined) headers['idempotency-key'] = req.idempotencyKey;
  const route = ROUTES[req.route];
  const path = route.path(webhookId);
  const res = await invoke(
    route.handler,
    apiEvent({
      method: 'POST',
      path,
      params: { webhookId },
      headers,
      ...(req.creds.apiKey !== undefined ? { query: { api_key: req.creds.apiKey } } : {}),
      ...(body.body !== undefined ? { body: body.body } : {}),
      isBase64Encoded: body.isBase64Encoded,
      sourceIp: req.sourceIp,
    }),
  );
  const what = `POST ${path} -> ${res.status} ${res.body?.slice(0, 300)}`;
  expect(res.status, what).toBeLessThan(500);
  expect(DOCUMENTED, what).toContain(res.status);
  expect(res.headers['x-request-id'], what).toEqual(expect.any(String));
  if (res.status >= 400) {
    expect(res.headers['content-type'], what).toBe('application/problem+json');
    expect(res.json, what).toMatchObject({ type: expect.any(String), title: expect.any(String), status: res.status });
    expect(res.json.code, what).toMatch(/^[A-Z][A-Z0-9_]*$/);
    expect(res.json.requestId, what).toBe(res.headers['x-request-id']);
    if (res.status === 401) expect(res.headers['www-authenticate'], what).toBe('Bearer');
    if (res.status === 429) expect(Number(res.headers['retry-after']), what).toBeGreaterThan(0);
  } else {
    expect(res.json, what).toEqual({
      executionId: expect.stringMatching(/^ex_[0-9a-z]{26}$/),
      webhookId,
      workflowId: expect.any(String),
      status: expect.any(String),
      startedAt: expect.any(Number),
    });
    expect(Number.isInteger(res.json.startedAt), what).toBe(true);
  }
  const bytes = rawBytes(body).length;
  if (bytes > MIB) expect(res.status, what).toBe(413);
  if (res.status === 413) expect(bytes, what).toBeGreaterThan(MIB);
  return { res, what, bytes, sig, body };
}

describe('the webhook trigger answers every request with a documented status, never 5xx', () => {
  it('key-bound webhook: only the first credential, and only the bound key, is accepted', async () => {
    await fc.assert(
      fc.asyncProperty(requests(), async (req) => {
        const { res, what } = await send(fx.key.webhookId, req);
        const first = firstCredential(req.creds);
        if (res.status === 200) expect(first, what).toBe(fx.boundToken);
        if (res.status !== 413 && first !== fx.boundToken) expect(res.status, what).toBe(401);
        if (first === fx.boundToken) expect(res.status, what).not.toBe(401);
      }),
      RUNS,
    );
  });

  it('HMAC webhook: only a correct signature of the raw bytes is accepted; keys are not', async () => {
    await fc.assert(
      fc.asyncProperty(requests(), async (req) => {
        const { res, what, sig, body } = await send(fx.hmac.webhookId, req);
        const expected = sign(rawBytes(body));
        // The spec's forms: `sha256=<hex>` or `<hex>`; hex compared case-insensitively.
        const strict =
          sig !== undefined && /^(sha256=)?[0-9a-fA-F]{64}$/.test(sig) && sig.replace(/^sha256=/, '').toLowerCase() === expected;
        // What a lenient reader may also take: surrounding whitespace and the prefix in any case.
        const lenient =
          sig !== undefined &&
          sig
            .trim()
            .replace(/^sha256=/i, '')
            .toLowerCase() === expected;
        if (res.status === 200) expect(lenient, what).toBe(true);
        if (res.status !== 413) {
          if (strict) expect(res.status, what).not.toBe(401);
          if (!lenient) {
            expect(res.status, what).toBe(401);
            expect(res.json.code, what).toBe('INVALID_SIGNATURE');
          }
        }
      }),
      RUNS,
    );
  });

  it('open webhook: no identity check, so never 401 or 403', async () => {
    await fc.assert(
      fc.asyncProperty(requests(), async (req) => {
        const { res, what } = await send(fx.open.webhookId, req);
        expect([401, 403], what).not.toContain(res.status);
      }),
      RUNS,
    );
  });

  it('webhook with a variable mapping: mapped fields of any JSON type never break the trigger', async () => {
    await fc.assert(
      fc.asyncProperty(requests(), async (req) => {
        const { res, what } = await send(fx.mapped.webhookId, req);
        expect([401, 403], what).not.toContain(res.status);
      }),
      RUNS,
    );
  });

  it('allowlisted webhook: 200 only from an allowed address (X-Forwarded-For ignored without trusted proxies)', async () => {
    const ranges = ALLOWLIST.map(parseRange).filter((r) => r !== undefined);
    await fc.assert(
      fc.asyncProperty(requests(), async (req) => {
        const { res, what } = await send(fx.allowlisted.webhookId, req);
        const allowed = inRanges(req.sourceIp, ranges);
        if (res.status === 200) expect(allowed, what).toBe(true);
        if (res.status !== 413) expect(res.status === 403, what).toBe(!allowed);
      }),
      RUNS,
    );
  });

  it('disabled webhook: never 200; with the bound key and a small body, always 409', async () => {
    await fc.assert(
      fc.asyncProperty(requests(), async (req) => {
        const { res, what } = await send(fx.disabled.webhookId, req);
        expect(res.status, what).not.toBe(200);
        if (res.status !== 413) expect(res.status, what).toBe(firstCredential(req.creds) === fx.boundToken ? 409 : 401);
      }),
      RUNS,
    );
  });

  it('unknown and malformed ids: 404 (or 413 for an oversized body)', async () => {
    const ids = fc.oneof(
      fc.stringMatching(/^wh_[0-9a-z]{26}$/),
      fc.stringMatching(/^[a-z]{2,3}_[0-9a-z]{26}$/),
      text,
      fc.constantFrom('', 'wh_', `${'x'.repeat(300)}`, '../..', 'wh_00000000000000000000000000'),
    );
    await fc.assert(
      fc.asyncProperty(ids, requests(), async (id, req) => {
        const { res, what } = await send(id, req);
        expect([404, 413], what).toContain(res.status);
        if (res.status === 404) expect(res.json.code, what).toBe('WEBHOOK_NOT_FOUND');
      }),
      { numRuns: 60 },
    );
  });

  it('behind trusted proxies, any X-Forwarded-For chain gives a documented status, and 200 past the allowlist only for an allowed client', async () => {
    process.env.TRUSTED_PROXIES = '10.0.0.0/8,127.0.0.1/32';
    resetConfig();
    try {
      const long = fc
        .tuple(fc.integer({ min: 200, max: 3000 }), fc.constantFrom('x', '1', 'f:', '\u00e9', ','))
        .map(([n, c]) => c.repeat(n));
      const chain = fc.array(fc.oneof(hop, long), { maxLength: 6 }).map((a) => a.join(', '));
      const peer = fc.oneof(
        fc.ipV4().map((ip) => `10.${ip.split('.').slice(1).join('.')}`),
        fc.constant('127.0.0.1'),
      );
      const targets = fc.constantFrom(fx.allowlisted, fx.open, fx.hmac);
      await fc.assert(
        fc.asyncProperty(requests(), chain, peer, targets, async (base, xff, peerIp, target) => {
          const req = { ...base, forwardedFor: xff, sourceIp: peerIp };
          const { res, what } = await send(target.webhookId, req);
          if (target === fx.allowlisted && res.status === 200) {
            // The client is the rightmost entry outside the trusted proxies, or the first one if all are trusted.
            const hops = xff
              .split(',')
              .map((s) => s.trim())
              .filter(Boolean);
            const trusted = ['10.0.0.0/8', '127.0.0.1/32'].map(parseRange).filter((r) => r !== undefined);
            const client = [...hops].reverse().find((h) => !inRanges(h, trusted)) ?? hops[0] ?? peerIp;
            const ranges = ALLOWLIST.map(parseRange).filter((r) => r !== undefined);
            expect(inRanges(client, ranges), what).toBe(true);
          }
        }),
        { numRuns: 80 },
      );
    } finally {
      delete process.env.TRUSTED_PROXIES;
      resetConfig();
    }
  });
});
