import { config } from '../../shared/config.ts';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { storage } from '../../shared/clients.ts';
import { listEvents } from '../../shared/db/entities/run-events.ts';
import { createHmac } from 'node:crypto';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localStackOnSharedEmulators } from '../support/local-stack.ts';
import { db, tableName } from '../../shared/clients.ts';
import { resetConfig } from '../../shared/config.ts';
import { putApiKey, type Scope } from '../../shared/db/entities/api-key.ts';
import { type Execution, getExecution, listExecutions } from '../../shared/db/entities/execution.ts';
import type { Webhook } from '../../shared/db/entities/webhook.ts';
import { createKey, revokeKey } from '../../shared/domain/keys.ts';
import { createWebhook } from '../../shared/domain/webhooks.ts';
import { createWorkflow } from '../../shared/domain/workflows.ts';
import { WorkflowDefinition } from '../../shared/engine/definition.ts';
import { newTokenId } from '../../shared/ids.ts';
import { CreateWebhookBody } from '../../shared/schemas/webhooks.ts';
import { hashToken, mintToken } from '../../shared/tokens.ts';
import { eventually } from '../support/engine.ts';
import { bearer, expectProblem, readResponse } from '../support/http.ts';
import { expectRateLimitedHeaders } from '../support/rate-limit.ts';
import { givenAccount, openUnlessKeyed, PASSWORD } from '../support/fixtures.ts';

/**
 * The webhook trigger over real HTTP on the local stack (server, poller, worker, emulators), on both
 * the canonical and the legacy path: the spec's trigger error table, the check order of docs/webhooks.md "The trigger" and
 * credential modes, the source IP allowlist (with and without trusted proxies), the rate limit, the
 * body rules, idempotency, raw-byte HMAC, the three variable mapping rules and the stats.
 */

let stack: Awaited<ReturnType<typeof localStackOnSharedEmulators>>['stack'];
beforeAll(async () => {
  ({ stack } = await localStackOnSharedEmulators('webhook-trigger'));
});
afterAll(() => stack?.stop());

const MIB = 1024 * 1024;
const SECRET = 'hmac-shared-secret-0123456789';
const UNKNOWN_ID = 'wh_00000000000000000000000000';

type Res = { status: number; headers: Headers; text: string; json: any };
type Req = { body?: string | Buffer; headers?: Record<string, string>; query?: Record<string, string> };

/** POST raw bytes (a Buffer, so fetch adds no Content-Type of its own). */
async function send(path: string, req: Req = {}): Promise<Res> {
  const qs = req.query ? `?${new URLSearchParams(req.query)}` : '';
  const res = await fetch(`${stack.url}${path}${qs}`, {
    method: 'POST',
    headers: req.headers ?? {},
    body: req.body === undefined ? undefined : Buffer.from(req.body),
  });
  return readResponse(res);
}

const JSON_CT = { 'content-type': 'application/json' };
const sign = (body: string | Buffer, secret = SECRET) => createHmac('sha256', secret).update(body).digest('hex');

/** A JSON object of exactly `bytes` bytes, padded inside a nested object (not a variable). */
function objectOfSize(bytes: number): string {
  const head = '{"pad":{"x":"';
  const tail = '"}}';
  const s = head + 'a'.repeat(bytes - head.length - tail.length) + tail;
  expect(Buffer.byteLength(s)).toBe(bytes);
  return s;
}

async function countExecutions(accountId: string, workflowId: string): Promise<number> {
  let n = 0;
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await listExecutions(accountId, { workflowId }, 100, startKey);
    n += page.items.length;
    startKey = page.lastKey;
  } while (startKey);
  return n;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const DEFINITION = WorkflowDefinition.parse({
  variables: { region: { type: 'string', default: 'eu' } },
  steps: [{ id: 'mark', type: 'set', values: { marked: true } }],
});

type Session = { kind: 'session'; accountId: string; userId: string; role: 'admin' | 'member'; sessionId: string };
type Hook = { webhook: Webhook; accountId: string; workflowId: string };
type Key = Awaited<ReturnType<typeof createKey>>;

/** One account with a webhook in every mode and state the cases need; each describe gets its own. */
async function givenWebhooks(plan: 'enterprise' | 'pro' = 'enterprise') {
  const a = await givenAccount({ plan });
  const p: Session = { kind: 'session', accountId: a.account.accountId, userId: a.admin.userId, role: 'admin', sessionId: 'x' };
  const key = (scopes: Scope[] = ['WEBHOOK_TRIGGER'], name = 'trigger key') =>
    createKey({ accountId: p.accountId, userId: p.userId }, { name, scopes, validityDays: 30 });
  /** Each webhook gets its own workflow, so its executions can be counted alone. */
  const hook = async (input: Record<string, unknown> = {}): Promise<Hook> => {
    const workflow = await createWorkflow(p, { name: 'target', definition: DEFINITION, recovery: false, editors: [] });
    const webhook = await createWebhook(
      p,
      CreateWebhookBody.parse({ workflowId: workflow.workflowId, name: 'hook', ...openUnlessKeyed(input) }),
    );
    return { webhook, accountId: p.accountId, workflowId: workflow.workflowId };
  };
  return { a, p, key, hook };
}

async function setKeyFields(keyId: string, fields: Record<string, unknown>) {
  const names = Object.keys(fields);
  await db().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: { PK: `KEY#${keyId}`, SK: 'KEY' },
      UpdateExpression: `SET ${names.map((_, i) => `#f${i} = :v${i}`).join(', ')}`,
      ExpressionAttributeNames: Object.fromEntries(names.map((n, i) => [`#f${i}`, n])),
      ExpressionAttributeValues: Object.fromEntries(names.map((n, i) => [`:v${i}`, fields[n]])),
    }),
  );
}

const PATHS = [
  { name: 'POST /api/webhooks/{id}/trigger', path: (id: string) => `/api/webhooks/${id}/trigger` },
  { name: 'POST /api/webhook-trigger/{id}', path: (id: string) => `/api/webhook-trigger/${id}` },
];

/** The inputs a run was started with, as its first event keeps them. */
const inputOf = async (e: { accountId: string; executionId: string }) =>
  (await listEvents(e.accountId, e.executionId, 1)).items[0]?.data.input;

describe.each(PATHS)('$name', ({ path }) => {
  const trigger = (h: Hook | string, req: Req = {}) => send(path(typeof h === 'string' ? h : h.webhook.webhookId), req);

  /** Send, check the refusal, and check that no execution of the webhook's workflow was written. */
  async function refused(h: Hook, req: Req, status: number, code: string) {
    const before = await countExecutions(h.accountId, h.workflowId);
    const res = await trigger(h, req);
    expectProblem(res, status, code);
    expect(await countExecutions(h.accountId, h.workflowId)).toBe(before);
    return res;
  }

  /** Send, check the 200 and its body, and return the stored execution. */
  async function accepted(h: Hook, req: Req = {}): Promise<{ res: Res; execution: Execution }> {
    const res = await trigger(h, req);
    expect(res.status, res.text.slice(0, 300)).toBe(200);
    // The run exists at once; it takes its workflow's definition and defaults when the worker picks it up.
    const execution = (await eventually(
      () => getExecution(h.accountId, res.json.executionId),
      (e) => e !== undefined && (e.workflowVersion !== undefined || ['FAILED', 'CANCELLED', 'INTERRUPTED'].includes(e.status)),
    )) as Execution;
    return { res, execution };
  }

  let f: Awaited<ReturnType<typeof givenWebhooks>>;
  let boundKey: Key;
  let otherKey: Key;
  let foreignKey: Key;
  let expiredToken: string;
  let keyHook: Hook;
  let hmacHook: Hook;
  let openHook: Hook;
  let mappedHook: Hook;
  let revokedHook: Hook;
  let revoked: Key;
  let expiredHook: Hook;
  let expired: Key;
  let scopeHook: Hook;
  let unscoped: Key;
  let disabledHook: Hook;
  let disabledKeyHook: Hook;
  let disabledKey: Key;
  let disabledIpHook: Hook;
  let keyIpHook: Hook;
  let ipAllow: { deny10: Hook; exact: Hook; cidr: Hook; mapped: Hook; mappedCidr: Hook };

  beforeAll(async () => {
    f = await givenWebhooks();
    const other = await givenAccount({ plan: 'enterprise' });
    foreignKey = other.adminKey;
    [boundKey, otherKey, revoked, expired, unscoped, disabledKey] = await Promise.all([
      f.key(),
      f.key(['WEBHOOK_TRIGGER', 'WORKFLOW_READ'], 'another key'),
      f.key(),
      f.key(),
      f.key(),
      f.key(),
    ]);
    // An unbound key written directly, already expired.
    const expiredId = newTokenId();
    expiredToken = mintToken('dyk', expiredId);
    await putApiKey({
      keyId: expiredId,
      accountId: f.p.accountId,
      ownerId: f.p.userId,
      name: 'expired',
      scopes: ['WEBHOOK_TRIGGER'],
      tokenHash: hashToken(expiredToken),
      createdAt: Date.now() - 10 * 86_400_000,
      expiresAt: Date.now() - 86_400_000,
      usageTotal: 0,
      usageToday: 0,
    });
    [
      keyHook,
      hmacHook,
      openHook,
      mappedHook,
      revokedHook,
      expiredHook,
      scopeHook,
      disabledHook,
      disabledKeyHook,
      disabledIpHook,
      keyIpHook,
    ] = await Promise.all([
      // Key bound, with a secret still set: HMAC must never be accepted in this mode.
      f.hook({ apiKeyId: boundKey.id, secretKey: SECRET }),
      f.hook({ secretKey: SECRET }),
      f.hook(),
      f.hook({ variableMapping: { region: 'where', obj: 'o', list: 'arr', flag: 'b', gone: 'missing', deep: 'o.a', nothing: 'nul' } }),
      f.hook({ apiKeyId: revoked.id }),
      f.hook({ apiKeyId: expired.id }),
      f.hook({ apiKeyId: unscoped.id }),
      f.hook({ enabled: false }),
      f.hook({ apiKeyId: disabledKey.id, enabled: false }),
      f.hook({ enabled: false, allowedSourceIps: ['10.0.0.0/8'] }),
      f.hook({ apiKeyId: boundKey.id, allowedSourceIps: ['10.0.0.0/8'] }),
    ]);
    const [deny10, exact, cidr, mapped, mappedCidr] = await Promise.all([
      f.hook({ allowedSourceIps: ['10.0.0.0/8'] }),
      f.hook({ allowedSourceIps: ['192.0.2.1', '127.0.0.1'] }),
      f.hook({ allowedSourceIps: ['127.0.0.0/8'] }),
      f.hook({ allowedSourceIps: ['::ffff:127.0.0.1'] }),
      f.hook({ allowedSourceIps: ['::ffff:127.0.0.0/104'] }),
    ]);
    ipAllow = { deny10, exact, cidr, mapped, mappedCidr };
    // The bound keys go bad after binding (binding checks them): revoked, expired, scope removed.
    await revokeKey(f.p, revoked.id);
    await setKeyFields(expired.id, { expiresAt: Date.now() - 1000 });
    await setKeyFields(unscoped.id, { scopes: ['WORKFLOW_READ'] });
  });

  describe('413 and 404 come first', () => {
    it('accepts a body of exactly 1 MiB (1,048,576 bytes) and refuses 1,048,577 bytes with 413 PAYLOAD_TOO_LARGE', async () => {
      const exact = objectOfSize(MIB);
      const { res, execution } = await accepted(openHook, { body: exact, headers: JSON_CT });
      expect(res.json.status).toBe('PENDING');
      // A payload this large is kept in the artifacts bucket by reference, not on the run record.
      expect(execution.payload).toBeUndefined();
      const object = await (await storage()).send(new GetObjectCommand({ Bucket: config().ARTIFACTS_BUCKET, Key: execution.payloadRef }));
      expect(JSON.parse(await (object.Body as { transformToString: () => Promise<string> }).transformToString())).toEqual(
        JSON.parse(exact),
      );
      await refused(openHook, { body: objectOfSize(MIB + 1), headers: JSON_CT }, 413, 'PAYLOAD_TOO_LARGE');
    });

    it('accepts a 200 KB body whose top-level string field becomes a variable (well under 1 MiB and 256 KiB of variables)', async () => {
      const big = 'b'.repeat(200_000);
      const { execution } = await accepted(openHook, { body: JSON.stringify({ big }), headers: JSON_CT });
      expect(execution.variables.big).toBe(big);
    });

    // Valid JSON objects well within the limit that a DynamoDB map cannot hold as they are.
    const DEEP = Array.from({ length: 40 }).reduce<string>((inner) => `{"a":${inner}}`, '1');
    it.each([
      ['a 64-bit id above Number.MAX_SAFE_INTEGER', '{"id":12345678901234567890}'],
      ['a large number', '{"n":1e300}'],
      ['a tiny number', '{"n":-1e-300}'],
      ['the smallest double', '{"n":5e-324}'],
      ['an object nested 40 levels deep', `{"deep":${DEEP}}`],
      ['an empty key', '{"":"empty key"}'],
      ['a "__proto__" key', '{"__proto__":{"polluted":true},"constructor":"c"}'],
      ['a lone surrogate escape', '{"s":"\\ud800"}'],
      ['a duplicate key', '{"dup":1,"dup":2}'],
    ])('accepts a body with %s (200, never 500)', async (_, body) => {
      const res = await trigger(openHook, { body, headers: JSON_CT });
      expect(res.status, res.text).toBe(200);
      const execution = await getExecution(openHook.accountId, res.json.executionId);
      expect(execution?.payload).toEqual(JSON.parse(body));
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    });

    it('413 wins over every other failure: unknown id, missing key, disabled, bad content type', async () => {
      const big = objectOfSize(MIB + 1);
      expectProblem(await trigger(UNKNOWN_ID, { body: big, headers: JSON_CT }), 413, 'PAYLOAD_TOO_LARGE');
      await refused(keyHook, { body: big, headers: JSON_CT }, 413, 'PAYLOAD_TOO_LARGE');
      await refused(disabledHook, { body: big, headers: { 'content-type': 'text/plain' } }, 413, 'PAYLOAD_TOO_LARGE');
    });

    it('404 WEBHOOK_NOT_FOUND for an unknown id, before credentials, content type and body are looked at', async () => {
      expectProblem(await trigger(UNKNOWN_ID, { body: '{}', headers: JSON_CT }), 404, 'WEBHOOK_NOT_FOUND');
      expectProblem(await trigger(UNKNOWN_ID, { body: '{', headers: { 'content-type': 'text/plain' } }), 404, 'WEBHOOK_NOT_FOUND');
      expectProblem(await trigger(UNKNOWN_ID, { headers: bearer(boundKey.token) }), 404, 'WEBHOOK_NOT_FOUND');
      // A malformed id cannot exist: 404 as well, never 400 or 5xx.
      for (const id of ['nope', 'wh_UPPERCASE0000000000000000000', `${keyHook.webhook.webhookId}x`, '%20']) {
        const res = await trigger(id, { body: '{}', headers: JSON_CT });
        expect(res.status, `${id}: ${res.text}`).toBe(404);
        expect(res.headers.get('content-type')).toBe('application/problem+json');
      }
    });
  });

  describe('key-bound mode', () => {
    it('accepts the bound key as Bearer (any case of the scheme), X-API-Key, or ?api_key= alone', async () => {
      for (const headers of [bearer(boundKey.token), { authorization: `bearer ${boundKey.token}` }, { 'x-api-key': boundKey.token }]) {
        const { res } = await accepted(keyHook, { body: '{}', headers: { ...JSON_CT, ...headers } });
        expect(res.json.status).toBe('PENDING');
      }
      await accepted(keyHook, { body: '{}', headers: JSON_CT, query: { api_key: boundKey.token } });
    });

    it('401 UNAUTHORIZED without any credential', async () => {
      await refused(keyHook, { body: '{}', headers: JSON_CT }, 401, 'UNAUTHORIZED');
    });

    it('401 INVALID_API_KEY for malformed, forged, revoked and expired keys', async () => {
      const flipped = `${boundKey.token.slice(0, 30)}${boundKey.token[30] === 'a' ? 'b' : 'a'}${boundKey.token.slice(31)}`;
      for (const token of ['dyk_garbage', 'nope', flipped, `${boundKey.token}x`, boundKey.token.replace('dyk_', 'dys_')]) {
        await refused(keyHook, { body: '{}', headers: { ...JSON_CT, ...bearer(token) } }, 401, 'INVALID_API_KEY');
      }
      // Forged: the bound key's id with a well-formed, checksummed secret that is not the key's.
      const forged = mintToken('dyk', boundKey.id);
      expect(forged).not.toBe(boundKey.token);
      await refused(keyHook, { body: '{}', headers: { ...JSON_CT, ...bearer(forged) } }, 401, 'INVALID_API_KEY');
      await refused(keyHook, { body: '{}', headers: { ...JSON_CT, 'x-api-key': forged } }, 401, 'INVALID_API_KEY');
      await refused(revokedHook, { body: '{}', headers: { ...JSON_CT, ...bearer(revoked.token) } }, 401, 'INVALID_API_KEY');
      await refused(expiredHook, { body: '{}', headers: { ...JSON_CT, ...bearer(expired.token) } }, 401, 'INVALID_API_KEY');
      await refused(keyHook, { body: '{}', headers: { ...JSON_CT, ...bearer(expiredToken) } }, 401, 'INVALID_API_KEY');
    });

    it('401 KEY_NOT_BOUND for a valid key that is not the bound one (same account or another)', async () => {
      await refused(keyHook, { body: '{}', headers: { ...JSON_CT, ...bearer(otherKey.token) } }, 401, 'KEY_NOT_BOUND');
      await refused(keyHook, { body: '{}', headers: { ...JSON_CT, ...bearer(foreignKey.token) } }, 401, 'KEY_NOT_BOUND');
      await refused(keyHook, { body: '{}', headers: JSON_CT, query: { api_key: otherKey.token } }, 401, 'KEY_NOT_BOUND');
    });

    it('401 MISSING_SCOPE for the bound key once it no longer carries WEBHOOK_TRIGGER', async () => {
      await refused(scopeHook, { body: '{}', headers: { ...JSON_CT, ...bearer(unscoped.token) } }, 401, 'MISSING_SCOPE');
    });

    it('never accepts HMAC in key mode, even with a correct signature of the still-set secret', async () => {
      const body = '{"a":1}';
      await refused(keyHook, { body, headers: { ...JSON_CT, 'x-webhook-signature': `sha256=${sign(body)}` } }, 401, 'UNAUTHORIZED');
      await refused(keyHook, { body, headers: { ...JSON_CT, 'x-webhook-signature': sign(body) } }, 401, 'UNAUTHORIZED');
    });

    it('evaluates only the first credential present (Bearer, X-API-Key, api_key), with no fall-through', async () => {
      const good = boundKey.token;
      await refused(keyHook, { body: '{}', headers: { ...JSON_CT, ...bearer('dyk_garbage'), 'x-api-key': good } }, 401, 'INVALID_API_KEY');
      await refused(keyHook, { body: '{}', headers: { ...JSON_CT, ...bearer(otherKey.token), 'x-api-key': good } }, 401, 'KEY_NOT_BOUND');
      // A present but non-Bearer Authorization header is the first credential too: X-API-Key is not read.
      await refused(
        keyHook,
        { body: '{}', headers: { ...JSON_CT, authorization: 'Basic Zm9vOmJhcg==', 'x-api-key': good } },
        401,
        'UNAUTHORIZED',
      );
      await refused(
        keyHook,
        { body: '{}', headers: { ...JSON_CT, 'x-api-key': 'dyk_garbage' }, query: { api_key: good } },
        401,
        'INVALID_API_KEY',
      );
      await refused(
        keyHook,
        { body: '{}', headers: { ...JSON_CT, ...bearer('dyk_garbage') }, query: { api_key: good } },
        401,
        'INVALID_API_KEY',
      );
      await accepted(keyHook, { body: '{}', headers: JSON_CT, query: { api_key: good } });
    });
  });

  describe('HMAC mode', () => {
    const body = '{"event":"push","n":1}';

    it('accepts sha256=<hex>, bare <hex>, and the right HMAC in upper-case hex', async () => {
      const sig = sign(body);
      for (const s of [`sha256=${sig}`, sig, sig.toUpperCase(), `sha256=${sig.toUpperCase()}`]) {
        const { execution } = await accepted(hmacHook, { body, headers: { ...JSON_CT, 'x-webhook-signature': s } });
        expect(execution.authMode).toBe('hmac');
      }
    });

    it('401 INVALID_SIGNATURE for missing, short, long, wrong and garbage signatures (never 500)', async () => {
      const sig = sign(body);
      await refused(hmacHook, { body, headers: JSON_CT }, 401, 'INVALID_SIGNATURE');
      const bad = [
        sig.slice(0, 63),
        sig.slice(0, 10),
        `${sig}00`,
        `${sig}${sig}`,
        `sha256=${sig.slice(1)}`,
        `sha256=${sig}0`,
        sign(body, 'another-secret-0123456789'),
        sign(`${body} `),
        'garbage',
        'sha256=',
        `sha1=${sig}`,
        `sha256=sha256=${sig}`,
        'ü'.repeat(64),
        'z'.repeat(64),
        '0'.repeat(10_000),
        ' ',
      ];
      for (const s of bad) {
        await refused(hmacHook, { body, headers: { ...JSON_CT, 'x-webhook-signature': s } }, 401, 'INVALID_SIGNATURE');
      }
    });

    it('does not accept an API key instead of the signature', async () => {
      await refused(hmacHook, { body, headers: { ...JSON_CT, ...bearer(boundKey.token) } }, 401, 'INVALID_SIGNATURE');
      await refused(hmacHook, { body, headers: JSON_CT, query: { api_key: boundKey.token } }, 401, 'INVALID_SIGNATURE');
      await refused(
        hmacHook,
        { body, headers: { ...JSON_CT, 'x-api-key': boundKey.token, 'x-webhook-signature': sign('{}') } },
        401,
        'INVALID_SIGNATURE',
      );
    });

    it('signs the raw bytes as received: odd formatting and escapes pass; the re-serialised JSON with that signature is 401', async () => {
      const raw = '{ "z" :[ 1,2 ],\n  "a":"\\u00e9t\\u00e9",   "b": "caf\u00e9 \u2603",\t"n": 1.50 }\n';
      const sig = sign(Buffer.from(raw, 'utf8'));
      const { execution } = await accepted(hmacHook, {
        body: Buffer.from(raw, 'utf8'),
        headers: { ...JSON_CT, 'x-webhook-signature': sig },
      });
      expect(execution.payload).toEqual({ z: [1, 2], a: 'été', b: 'café ☃', n: 1.5 });
      const reserialised = JSON.stringify(JSON.parse(raw));
      expect(reserialised).not.toBe(raw);
      await refused(hmacHook, { body: reserialised, headers: { ...JSON_CT, 'x-webhook-signature': sig } }, 401, 'INVALID_SIGNATURE');
      const sorted = JSON.stringify(Object.fromEntries(Object.entries(JSON.parse(raw)).sort()));
      await refused(hmacHook, { body: sorted, headers: { ...JSON_CT, 'x-webhook-signature': sig } }, 401, 'INVALID_SIGNATURE');
    });

    it('signs the empty body too (an empty body is {})', async () => {
      const { execution } = await accepted(hmacHook, { headers: { 'x-webhook-signature': sign('') } });
      expect(execution.payload).toEqual({});
      await refused(hmacHook, { headers: { 'x-webhook-signature': sign('{}') } }, 401, 'INVALID_SIGNATURE');
    });
  });

  describe('open mode', () => {
    it('performs no identity check, and ignores any credential sent', async () => {
      const { execution } = await accepted(openHook, { body: '{}', headers: JSON_CT });
      expect(execution.authMode).toBe('open');
      expect(execution.keyId).toBeUndefined();
      await accepted(openHook, { body: '{}', headers: { ...JSON_CT, ...bearer('dyk_garbage'), 'x-webhook-signature': 'nope' } });
    });
  });

  describe('source IP allowlist', () => {
    it('403 IP_NOT_ALLOWED from 127.0.0.1 when only 10.0.0.0/8 is allowed', async () => {
      await refused(ipAllow.deny10, { body: '{}', headers: JSON_CT }, 403, 'IP_NOT_ALLOWED');
    });

    it('allows 127.0.0.1 by address, by CIDR, and by IPv4-mapped IPv6 address or range', async () => {
      for (const h of [ipAllow.exact, ipAllow.cidr, ipAllow.mapped, ipAllow.mappedCidr]) {
        const { execution } = await accepted(h, { body: '{}', headers: JSON_CT });
        expect(execution.sourceIp).toBe('127.0.0.1');
      }
    });

    it('ignores X-Forwarded-For when no proxy is trusted', async () => {
      await refused(ipAllow.deny10, { body: '{}', headers: { ...JSON_CT, 'x-forwarded-for': '10.1.1.1' } }, 403, 'IP_NOT_ALLOWED');
      const { execution } = await accepted(ipAllow.exact, { body: '{}', headers: { ...JSON_CT, 'x-forwarded-for': '10.9.9.9' } });
      expect(execution.sourceIp).toBe('127.0.0.1');
    });

    it('checks credentials before the address: failing both is 401; failing the address with the key is 403', async () => {
      await refused(keyIpHook, { body: '{}', headers: JSON_CT }, 401, 'UNAUTHORIZED');
      await refused(keyIpHook, { body: '{}', headers: { ...JSON_CT, ...bearer(otherKey.token) } }, 401, 'KEY_NOT_BOUND');
      await refused(keyIpHook, { body: '{}', headers: { ...JSON_CT, ...bearer(boundKey.token) } }, 403, 'IP_NOT_ALLOWED');
    });

    it('checks the address before the enabled flag, content type and body', async () => {
      await refused(disabledIpHook, { body: '{}', headers: JSON_CT }, 403, 'IP_NOT_ALLOWED');
      await refused(ipAllow.deny10, { body: '{', headers: { 'content-type': 'text/plain' } }, 403, 'IP_NOT_ALLOWED');
    });

    describe('behind a trusted proxy (TRUSTED_PROXIES=127.0.0.1/32)', () => {
      let viaProxy: { allowClient: Hook; allowFirst: Hook; open: Hook };
      beforeAll(async () => {
        process.env.TRUSTED_PROXIES = '127.0.0.1/32';
        resetConfig();
        const [allowClient, allowFirst, open] = await Promise.all([
          f.hook({ allowedSourceIps: ['203.0.113.9'] }),
          f.hook({ allowedSourceIps: ['10.1.1.1'] }),
          f.hook(),
        ]);
        viaProxy = { allowClient, allowFirst, open };
      });
      afterAll(() => {
        delete process.env.TRUSTED_PROXIES;
        resetConfig();
      });

      it('takes the rightmost untrusted X-Forwarded-For entry as the client', async () => {
        const xff = { ...JSON_CT, 'x-forwarded-for': '10.1.1.1, 203.0.113.9' };
        const { execution } = await accepted(viaProxy.allowClient, { body: '{}', headers: xff });
        expect(execution.sourceIp).toBe('203.0.113.9');
        await refused(viaProxy.allowFirst, { body: '{}', headers: xff }, 403, 'IP_NOT_ALLOWED');
        // Trusted hops on the right are skipped.
        await accepted(viaProxy.allowClient, { body: '{}', headers: { ...JSON_CT, 'x-forwarded-for': '203.0.113.9, 127.0.0.1' } });
        // Without the header, the trusted peer itself is the client.
        await refused(viaProxy.allowClient, { body: '{}', headers: JSON_CT }, 403, 'IP_NOT_ALLOWED');
      });

      it('answers a hostile X-Forwarded-For chain with 403 (or 200 where nothing is restricted), never 5xx', async () => {
        const chains = [
          'garbage',
          ' , ,,',
          '999.1.1.1',
          '10.1.1.1, <script>alert(1)</script>',
          `10.1.1.1, ${'x'.repeat(4000)}`,
          '10.1.1.1, ::ffff:zz, 127.0.0.1',
          '203.0.113.9, unknown',
          '10.1.1.1:8080',
          '[10.1.1.1]',
          'for=10.1.1.1',
        ];
        for (const chain of chains) {
          const headers = { ...JSON_CT, 'x-forwarded-for': chain };
          await refused(viaProxy.allowFirst, { body: '{}', headers }, 403, 'IP_NOT_ALLOWED');
          await refused(viaProxy.allowClient, { body: '{}', headers }, 403, 'IP_NOT_ALLOWED');
          const open = await trigger(viaProxy.open, { body: '{}', headers });
          expect(open.status, `${chain}: ${open.text}`).toBe(200);
        }
      });
    });
  });

  describe('enabled flag', () => {
    it('409 WEBHOOK_DISABLED, after credentials and before content type and body', async () => {
      await refused(disabledHook, { body: '{}', headers: JSON_CT }, 409, 'WEBHOOK_DISABLED');
      await refused(disabledHook, { body: '{', headers: { 'content-type': 'text/plain' } }, 409, 'WEBHOOK_DISABLED');
      await refused(disabledHook, { body: '[1]', headers: JSON_CT }, 409, 'WEBHOOK_DISABLED');
      await refused(disabledKeyHook, { body: '{}', headers: JSON_CT }, 401, 'UNAUTHORIZED');
      await refused(disabledKeyHook, { body: '{}', headers: { ...JSON_CT, ...bearer(otherKey.token) } }, 401, 'KEY_NOT_BOUND');
      await refused(disabledKeyHook, { body: '{}', headers: { ...JSON_CT, ...bearer(disabledKey.token) } }, 409, 'WEBHOOK_DISABLED');
    });
  });

  describe('content type and body', () => {
    it('415 UNSUPPORTED_MEDIA_TYPE for text/plain and form bodies, even when they hold JSON', async () => {
      for (const ct of [
        'text/plain',
        'text/plain; charset=utf-8',
        'application/x-www-form-urlencoded',
        'multipart/form-data; boundary=x',
      ]) {
        await refused(openHook, { body: '{"a":1}', headers: { 'content-type': ct } }, 415, 'UNSUPPORTED_MEDIA_TYPE');
      }
      // 415 comes before the body check.
      await refused(openHook, { body: '{', headers: { 'content-type': 'text/plain' } }, 415, 'UNSUPPORTED_MEDIA_TYPE');
    });

    it('accepts an absent Content-Type, application/json with parameters, and +json types', async () => {
      const variants: Record<string, string>[] = [
        {},
        { 'content-type': 'application/json; charset=utf-8' },
        { 'content-type': 'APPLICATION/JSON' },
        { 'content-type': 'application/cloudevents+json' },
      ];
      for (const headers of variants) {
        const { execution } = await accepted(openHook, { body: '{"a":1}', headers });
        expect(execution.payload).toEqual({ a: 1 });
      }
    });

    it('400 INVALID_JSON for a body that is not JSON', async () => {
      for (const body of ['{', '{"a":}', "{'a':1}", 'undefined', '\u00ff']) {
        await refused(openHook, { body, headers: JSON_CT }, 400, 'INVALID_JSON');
      }
    });

    it('400 BODY_NOT_OBJECT for JSON that is not an object', async () => {
      for (const body of ['[1]', '[]', '"x"', '3', 'null', 'true']) {
        await refused(openHook, { body, headers: JSON_CT }, 400, 'BODY_NOT_OBJECT');
      }
    });

    it('an empty body (with or without Content-Type) is accepted as {}', async () => {
      for (const headers of [{}, JSON_CT]) {
        const { execution } = await accepted(openHook, { headers });
        expect(execution.payload).toEqual({});
      }
      const { execution } = await accepted(openHook, { body: '', headers: JSON_CT });
      expect(execution.payload).toEqual({});
    });
  });

  describe('accepted triggers', () => {
    it('answers { executionId, webhookId, workflowId, status: PENDING, startedAt } and stores the request', async () => {
      const before = Date.now();
      const body = '{"who":"ada","n":2}';
      const { res, execution } = await accepted(keyHook, { body, headers: { ...JSON_CT, ...bearer(boundKey.token) } });
      expect(Object.keys(res.json).sort()).toEqual(['executionId', 'startedAt', 'status', 'webhookId', 'workflowId']);
      expect(res.json).toEqual({
        executionId: expect.stringMatching(/^ex_[0-9a-z]{26}$/),
        webhookId: keyHook.webhook.webhookId,
        workflowId: keyHook.workflowId,
        status: 'PENDING',
        startedAt: expect.any(Number),
      });
      expect(Number.isInteger(res.json.startedAt)).toBe(true);
      expect(res.json.startedAt).toBeGreaterThanOrEqual(before - 1000);
      expect(res.json.startedAt).toBeLessThanOrEqual(Date.now() + 1000);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(res.headers.get('x-ratelimit-limit')).toEqual(expect.any(String));
      expect(res.headers.get('idempotent-replayed')).toBeNull();
      expect(execution).toMatchObject({
        executionId: res.json.executionId,
        workflowId: keyHook.workflowId,
        webhookId: keyHook.webhook.webhookId,
        trigger: 'webhook',
        payload: { who: 'ada', n: 2 },
        authMode: 'api_key',
        keyId: boundKey.id,
        sourceIp: '127.0.0.1',
        startedAt: res.json.startedAt,
      });
    });

    it('every trigger creates a new execution: the same payload twice gives two executions', async () => {
      const before = await countExecutions(openHook.accountId, openHook.workflowId);
      const first = await accepted(openHook, { body: '{"same":1}', headers: JSON_CT });
      const second = await accepted(openHook, { body: '{"same":1}', headers: JSON_CT });
      expect(second.res.json.executionId).not.toBe(first.res.json.executionId);
      expect(await countExecutions(openHook.accountId, openHook.workflowId)).toBe(before + 2);
    });

    it('Idempotency-Key replays the first execution; another body with that key is 409 IDEMPOTENCY_KEY_REUSED', async () => {
      const before = await countExecutions(openHook.accountId, openHook.workflowId);
      const headers = { ...JSON_CT, 'idempotency-key': 'order-42' };
      const first = await accepted(openHook, { body: '{"order":42}', headers });
      expect(first.res.headers.get('idempotent-replayed')).toBeNull();
      const again = await trigger(openHook, { body: '{"order":42}', headers });
      expect(again.status).toBe(200);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(again.json.executionId).toBe(first.res.json.executionId);
      expect(again.json.webhookId).toBe(openHook.webhook.webhookId);
      await refused(openHook, { body: '{"order":43}', headers }, 409, 'IDEMPOTENCY_KEY_REUSED');
      expect(await countExecutions(openHook.accountId, openHook.workflowId)).toBe(before + 1);
      // The key is scoped to the webhook: another webhook starts its own run.
      const elsewhere = await accepted(ipAllow.exact, { body: '{"order":42}', headers });
      expect(elsewhere.res.json.executionId).not.toBe(first.res.json.executionId);
    });
  });

  describe('variable mapping', () => {
    it('without a mapping, only top-level strings, numbers and booleans become variables', async () => {
      const payload = { s: 'x', n: 1.5, zero: 0, t: true, f: false, empty: '', o: { a: 1 }, arr: [1, 2], nul: null };
      const { execution } = await accepted(openHook, { body: JSON.stringify(payload), headers: JSON_CT });
      expect(execution.payload).toEqual(payload);
      expect(execution.variables).toMatchObject({ s: 'x', n: 1.5, zero: 0, t: true, f: false, empty: '', region: 'eu' });
      for (const name of ['o', 'arr', 'nul', 'a']) expect(execution.variables).not.toHaveProperty(name);
      expect(await inputOf(execution)).toEqual({ s: 'x', n: 1.5, zero: 0, t: true, f: false, empty: '' });
    });

    it('with a mapping, a mapped top-level field of any JSON type is passed as is; nested paths are not looked up', async () => {
      const payload = { where: 'us', o: { a: 1, b: [true] }, arr: [1, 'two', null], b: false, nul: null, other: 'x', 'o.a': 'flat' };
      const { execution } = await accepted(mappedHook, { body: JSON.stringify(payload), headers: JSON_CT });
      expect(await inputOf(execution)).toEqual({
        region: 'us',
        obj: { a: 1, b: [true] },
        list: [1, 'two', null],
        flag: false,
        nothing: null,
        deep: 'flat',
      });
      expect(execution.variables).toMatchObject({ region: 'us', obj: { a: 1, b: [true] }, list: [1, 'two', null], flag: false });
      expect(execution.variables).not.toHaveProperty('other');
      expect(execution.variables).not.toHaveProperty('where');
      expect(execution.variables).not.toHaveProperty('gone');
    });

    it('an absent mapped field leaves the template default (never an empty string) and injects nothing', async () => {
      const { execution } = await accepted(mappedHook, { body: '{"unrelated":"x","o":{"a":2}}', headers: JSON_CT });
      expect(execution.variables.region).toBe('eu');
      for (const name of ['gone', 'list', 'flag', 'deep', 'nothing', 'unrelated']) expect(execution.variables).not.toHaveProperty(name);
      expect(execution.variables.obj).toEqual({ a: 2 });
      const empty = await accepted(mappedHook, {});
      expect(empty.execution.variables.region).toBe('eu');
      expect(await inputOf(empty.execution)).toEqual({});
    });
  });

  describe('rate limit (RATE_LIMITS={"pro":3})', () => {
    let pro: Awaited<ReturnType<typeof givenWebhooks>>;
    let open: Hook;
    let disabled: Hook;
    let keyed: Hook;
    beforeAll(async () => {
      process.env.RATE_LIMITS = JSON.stringify({ pro: 3 });
      resetConfig();
      pro = await givenWebhooks('pro');
      // The pro plan allows 3 webhooks: all three are used.
      [open, disabled, keyed] = await Promise.all([pro.hook(), pro.hook({ enabled: false }), pro.hook({ apiKeyId: pro.a.adminKey.id })]);
    });
    afterAll(() => {
      delete process.env.RATE_LIMITS;
      resetConfig();
    });

    it('429 RATE_LIMITED with Retry-After and X-RateLimit-* past the budget, writing no execution', { timeout: 60_000 }, async () => {
      // Keep the four requests inside one fixed minute window.
      const into = Date.now() % 60_000;
      if (into > 45_000) await sleep(60_000 - into + 250);
      for (let i = 0; i < 3; i++) {
        const res = await trigger(open, { body: '{}', headers: JSON_CT });
        expect(res.status, res.text).toBe(200);
        expect(res.headers.get('x-ratelimit-limit')).toBe('3');
        expect(res.headers.get('x-ratelimit-remaining')).toBe(String(2 - i));
        expect(Number(res.headers.get('x-ratelimit-reset'))).toBeGreaterThan(Date.now() / 1000 - 1);
      }
      const limited = await refused(open, { body: '{}', headers: JSON_CT }, 429, 'RATE_LIMITED');
      expectRateLimitedHeaders(limited.headers, 3);

      // Order: 401, 409 before 429; 429 before 415 and 400.
      await refused(keyed, { body: '{}', headers: JSON_CT }, 401, 'UNAUTHORIZED');
      await refused(keyed, { body: '{}', headers: { ...JSON_CT, ...bearer(pro.a.adminKey.token) } }, 429, 'RATE_LIMITED');
      await refused(disabled, { body: '{}', headers: JSON_CT }, 409, 'WEBHOOK_DISABLED');
      await refused(open, { body: '{"a":1}', headers: { 'content-type': 'text/plain' } }, 429, 'RATE_LIMITED');
      await refused(open, { body: '{', headers: JSON_CT }, 429, 'RATE_LIMITED');
    });
  });

  describe('stats', () => {
    it('counts accepted and refused triggers by status and day; a 404 counts nowhere; the bound key usage grows', async () => {
      const statsKey = await f.key(['WEBHOOK_TRIGGER'], 'stats key');
      const h = await f.hook({ apiKeyId: statsKey.id });
      const started = Date.now();
      const auth = { ...JSON_CT, ...bearer(statsKey.token) };
      const ok: { startedAt: number }[] = [];
      for (let i = 0; i < 3; i++) ok.push((await accepted(h, { body: JSON.stringify({ i }), headers: auth })).res.json);
      await refused(h, { body: '{}', headers: JSON_CT }, 401, 'UNAUTHORIZED');
      await refused(h, { body: '{}', headers: { ...JSON_CT, ...bearer(otherKey.token) } }, 401, 'KEY_NOT_BOUND');
      await refused(h, { body: '{', headers: auth }, 400, 'INVALID_JSON');
      await refused(h, { body: '{}', headers: { ...auth, 'content-type': 'text/plain' } }, 415, 'UNSUPPORTED_MEDIA_TYPE');
      expectProblem(await trigger(UNKNOWN_ID, { body: '{}', headers: auth }), 404, 'WEBHOOK_NOT_FOUND');
      expect((await trigger('nope', { body: '{}', headers: auth })).status).toBe(404);

      const login = await fetch(`${stack.url}/api/auth/login`, {
        method: 'POST',
        headers: JSON_CT,
        body: JSON.stringify({ email: f.a.admin.email, password: PASSWORD }),
      });
      expect(login.status).toBe(200);
      const session = ((await login.json()) as { token: string }).token;
      type Stats = {
        total: number;
        accepted: number;
        rejected: Record<string, number>;
        lastTriggeredAt: number | null;
        daily: { date: string; accepted: number; rejected: number }[];
      };
      // Refusals count at once; an accepted trigger counts when the worker picks its run up.
      const stats = await eventually(
        async () => {
          const res = await fetch(`${stack.url}/api/webhooks/${h.webhook.webhookId}/stats`, { headers: bearer(session) });
          expect(res.status).toBe(200);
          return (await res.json()) as Stats;
        },
        (s) => s.accepted === 3,
      );
      expect(stats).toMatchObject({ total: 7, accepted: 3, rejected: { '401': 2, '400': 1, '415': 1 } });
      expect(Object.keys(stats.rejected).sort()).toEqual(['400', '401', '415']);
      expect(stats.lastTriggeredAt).toEqual(expect.any(Number));
      expect(stats.lastTriggeredAt).toBeGreaterThanOrEqual(Math.max(...ok.map((r) => r.startedAt)));
      expect(stats.lastTriggeredAt).toBeLessThanOrEqual(Date.now());
      expect(stats.daily).toHaveLength(30);
      const today = new Date().toISOString().slice(0, 10);
      expect(stats.daily.at(-1)).toEqual({ date: today, accepted: 3, rejected: 4 });
      for (const [i, d] of stats.daily.entries()) {
        expect(d.date).toBe(new Date(Date.parse(`${today}T00:00:00Z`) - (29 - i) * 86_400_000).toISOString().slice(0, 10));
        if (i < 29) expect(d).toMatchObject({ accepted: 0, rejected: 0 });
      }

      type Keys = { items: { id: string; usage: { total: number; today: number; lastUsedAt: number | null } }[] };
      const list = await eventually(
        async () => {
          const res = await fetch(`${stack.url}/api/keys`, { headers: bearer(session) });
          expect(res.status).toBe(200);
          return (await res.json()) as Keys;
        },
        (l) => l.items.find((k) => k.id === statsKey.id)?.usage.total === 5,
      );
      // Every request the key authenticated that got as far as the rate limit: the three accepted, the 400 and the 415.
      const usage = list.items.find((k) => k.id === statsKey.id)?.usage;
      expect(usage?.today).toBe(5);
      expect(usage?.lastUsedAt).toBeGreaterThanOrEqual(started);
      const other = list.items.find((k) => k.id === otherKey.id)?.usage;
      expect(other?.total).toBe(0);
    });
  });
});
