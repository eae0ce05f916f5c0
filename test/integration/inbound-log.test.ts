import { createHmac, randomUUID } from 'node:crypto';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { handler as triggerHandler } from '../../functions/http/webhooks/trigger.ts';
import { handler as requestsHandler } from '../../functions/http/webhooks/requests.ts';
import { handler as requestHandler } from '../../functions/http/webhooks/request.ts';
import { handler as replayHandler } from '../../functions/http/webhooks/replay.ts';
import { handler as updateHandler } from '../../functions/http/webhooks/update.ts';
import { db, tableName } from '../../shared/clients.ts';
import { listAuditEntries } from '../../shared/db/entities/audit.ts';
import { getExecution } from '../../shared/db/entities/execution.ts';
import { INBOUND_BODY_BYTES, INBOUND_LOG_SIZE } from '../../shared/db/entities/inbound-request.ts';
import { flushRefusals, REFUSAL_BYTES_PER_FLUSH, REFUSALS_PER_FLUSH } from '../../shared/domain/inbound-record.ts';
import { createKey } from '../../shared/domain/keys.ts';
import { caches } from '../../shared/domain/records.ts';
import { createWebhook } from '../../shared/domain/webhooks.ts';
import { createWorkflow } from '../../shared/domain/workflows.ts';
import { WorkflowDefinition } from '../../shared/engine/definition.ts';
import { CreateWebhookBody } from '../../shared/schemas/webhooks.ts';
import { useOwnQueues } from '../support/engine.ts';
import { adminSession, givenAccount } from '../support/fixtures.ts';
import { apiEvent, bearer, expectProblem, invoke } from '../support/http.ts';
import { sessionOf } from '../support/sessions.ts';

/**
 * A webhook's inbound log (docs/webhooks.md "Why was my request refused?"): every refusal of the trigger
 * with its code and status and the request masked, accepted requests as links to their runs, replay
 * once per Idempotency-Key, and a flood of refusals that leaves at most INBOUND_LOG_SIZE behind.
 */

beforeAll(() => useOwnQueues());

const SECRET = 'inbound-secret-0123456789';
const sign = (body: string) => `sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}`;
const FAKE_KEY = `dyk_${'0123456789abcdefghjkmnpqrs'}_${'A'.repeat(49)}`;

async function given() {
  const a = await givenAccount({ plan: 'enterprise' });
  const admin = adminSession(a);
  const workflow = await createWorkflow(admin, {
    name: 'inbound',
    definition: WorkflowDefinition.parse({ steps: [{ id: 'mark', type: 'set', values: { marked: true } }] }),
    recovery: false,
    editors: [],
  });
  const hook = (input: Record<string, unknown>) =>
    createWebhook(admin, CreateWebhookBody.parse({ workflowId: workflow.workflowId, name: 'h', ...input }));
  const session = await sessionOf(a.admin.email);
  const trigger = async (webhookId: string, body: string, headers: Record<string, string> = {}, sourceIp = '203.0.113.9') => {
    const res = await invoke(
      triggerHandler,
      apiEvent({
        method: 'POST',
        path: `/api/webhooks/${webhookId}/trigger`,
        params: { webhookId },
        headers: { 'content-type': 'application/json', ...headers },
        body,
        sourceIp,
      }),
    );
    return res;
  };
  const log = async (id: string, query: Record<string, string> = {}, as = session) =>
    invoke(requestsHandler, apiEvent({ path: `/api/webhooks/${id}/requests`, headers: bearer(as), params: { id }, query }));
  const one = (id: string, requestId: string, as = session) =>
    invoke(requestHandler, apiEvent({ path: `/api/webhooks/${id}/requests/${requestId}`, headers: bearer(as), params: { id, requestId } }));
  const replay = (id: string, requestId: string, key?: string, as = session) =>
    invoke(
      replayHandler,
      apiEvent({
        method: 'POST',
        path: `/api/webhooks/${id}/requests/${requestId}/replay`,
        headers: { ...bearer(as), ...(key ? { 'idempotency-key': key } : {}) },
        params: { id, requestId },
      }),
    );
  const update = (id: string, body: object) =>
    invoke(updateHandler, apiEvent({ method: 'PUT', path: `/api/webhooks/${id}`, headers: bearer(session), params: { id }, body }));
  /** Every item of the log, page by page (`limit` a page), checking each page's answer. */
  const all = async (id: string, limit = 100) => {
    const items: any[] = [];
    let cursor: string | undefined;
    for (let pages = 0; pages < 200; pages++) {
      const res = await log(id, { limit: String(limit), ...(cursor ? { cursor } : {}) });
      expect(res.status, res.body).toBe(200);
      items.push(...res.json.items);
      cursor = res.json.nextCursor ?? undefined;
      if (!cursor) return { items, refused: res.json.refused as Record<string, number> };
    }
    throw new Error('the log did not end');
  };
  return { a, admin, workflow, hook, session, trigger, log, one, replay, update, all };
}

describe('each refusal, with its code and status, masked', () => {
  it('a refused signature: 401 INVALID_SIGNATURE, its credentials, signature and cookie masked (a key id kept), its body as sent', async () => {
    const t = await given();
    const w = await t.hook({ secretKey: SECRET });
    const body = JSON.stringify({ order: 42, note: 'hello' });
    const res = await t.trigger(w.webhookId, body, {
      'x-webhook-signature': 'sha256=00ff',
      authorization: `Bearer ${FAKE_KEY}`,
      cookie: 'session=abc',
      'user-agent': 'GitHub-Hookshot/1',
    });
    expectProblem(res, 401, 'INVALID_SIGNATURE');
    const { items } = await t.all(w.webhookId);
    expect(items).toHaveLength(1);
    const [r] = items;
    expect(r).toMatchObject({
      status: 401,
      code: 'INVALID_SIGNATURE',
      ip: '203.0.113.9',
      method: 'POST',
      body,
      bodyTruncated: false,
      replayable: false,
    });
    expect(r.requestId).toMatch(/^rq_[0-9a-z]{26}$/);
    expect(r.headers).toMatchObject({
      'x-webhook-signature': '***',
      cookie: '***',
      authorization: 'Bearer dyk_0123456789abcdefghjkmnpqrs_***',
      'user-agent': 'GitHub-Hookshot/1',
    });
    expect(JSON.stringify(r)).not.toContain('00ff');
    expect(JSON.stringify(r)).not.toContain('A'.repeat(49));
    const single = await t.one(w.webhookId, r.requestId);
    expect(single.status).toBe(200);
    expect(single.json).toEqual(r);
  });

  it("a key without the webhook's scope: 401 MISSING_SCOPE (the bound key) and KEY_NOT_BOUND (another one), X-API-Key masked", async () => {
    const t = await given();
    const bound = await createKey(
      { accountId: t.a.account.accountId, userId: t.a.admin.userId },
      { name: 'k', scopes: ['WEBHOOK_TRIGGER'], validityDays: 30 },
    );
    const other = await createKey(
      { accountId: t.a.account.accountId, userId: t.a.admin.userId },
      { name: 'r', scopes: ['WORKFLOW_READ'], validityDays: 30 },
    );
    const w = await t.hook({ apiKeyId: bound.id });
    expectProblem(await t.trigger(w.webhookId, '{}', { 'x-api-key': other.token }), 401, 'KEY_NOT_BOUND');
    // The bound key's scope taken away since it was bound.
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: { PK: `KEY#${bound.id}`, SK: 'KEY' },
        UpdateExpression: 'SET scopes = :s',
        ExpressionAttributeValues: { ':s': ['WORKFLOW_READ'] },
      }),
    );
    caches.keys.delete(bound.id);
    expectProblem(await t.trigger(w.webhookId, '{}', { 'x-api-key': bound.token }), 401, 'MISSING_SCOPE');
    const { items, refused } = await t.all(w.webhookId);
    expect(items.map((i) => [i.status, i.code])).toEqual([
      [401, 'MISSING_SCOPE'],
      [401, 'KEY_NOT_BOUND'],
    ]);
    expect(items[0].headers['x-api-key']).toBe(`dyk_${bound.id}_***`);
    expect(items[1].headers['x-api-key']).toBe(`dyk_${other.id}_***`);
    expect(JSON.stringify(items)).not.toContain(bound.token.slice(-20));
    expect(refused).toEqual({ MISSING_SCOPE: 1, KEY_NOT_BOUND: 1 });
  });

  it('a disabled webhook (409), an address outside the allowlist (403) and a body over 1 MiB (413, its first 16 KiB kept)', async () => {
    const t = await given();
    const off = await t.hook({ secretKey: SECRET, enabled: false });
    const fenced = await t.hook({ secretKey: SECRET, allowedSourceIps: ['198.51.100.0/24'] });
    const body = JSON.stringify({ n: 1 });
    expectProblem(await t.trigger(off.webhookId, body, { 'x-webhook-signature': sign(body) }), 409, 'WEBHOOK_DISABLED');
    expectProblem(await t.trigger(fenced.webhookId, body, { 'x-webhook-signature': sign(body) }, '192.0.2.1'), 403, 'IP_NOT_ALLOWED');
    const big = JSON.stringify({ pad: 'x'.repeat(1024 * 1024) });
    expectProblem(await t.trigger(fenced.webhookId, big, { 'x-webhook-signature': sign(big) }, '198.51.100.7'), 413, 'PAYLOAD_TOO_LARGE');

    const [disabled] = (await t.all(off.webhookId)).items;
    expect(disabled).toMatchObject({
      status: 409,
      code: 'WEBHOOK_DISABLED',
      body,
      replayable: true,
      headers: { 'x-webhook-signature': '***' },
    });
    const fencedLog = (await t.all(fenced.webhookId)).items;
    expect(fencedLog.map((i) => [i.status, i.code, i.ip])).toEqual([
      [413, 'PAYLOAD_TOO_LARGE', '198.51.100.7'],
      [403, 'IP_NOT_ALLOWED', '192.0.2.1'],
    ]);
    expect(fencedLog[0]).toMatchObject({ bodyTruncated: true, replayable: false });
    expect(Buffer.byteLength(fencedLog[0].body)).toBe(INBOUND_BODY_BYTES);
    expect(big.startsWith(fencedLog[0].body)).toBe(true);
    expect(fencedLog[1]).toMatchObject({ body, replayable: true });
    // Only the start of the large body was kept: it cannot be replayed.
    expectProblem(await t.replay(fenced.webhookId, fencedLog[0].requestId, 'cut'), 409, 'REQUEST_NOT_REPLAYABLE');
  });

  it('an accepted request links to its run: its id, the body the run keeps, status 200 and no code', async () => {
    const t = await given();
    const w = await t.hook({ secretKey: SECRET });
    const bad = JSON.stringify({ try: 1 });
    expectProblem(await t.trigger(w.webhookId, bad, { 'x-webhook-signature': 'sha256=bad' }), 401, 'INVALID_SIGNATURE');
    const body = JSON.stringify({ try: 2 });
    const ok = await t.trigger(w.webhookId, body, { 'x-webhook-signature': sign(body) });
    expect(ok.status).toBe(200);
    const { items } = await t.all(w.webhookId);
    expect(items.map((i) => i.status)).toEqual([200, 401]);
    expect(items[0]).toMatchObject({
      requestId: ok.json.executionId,
      executionId: ok.json.executionId,
      code: null,
      ip: '203.0.113.9',
      body,
      replayable: true,
    });
    const single = await t.one(w.webhookId, ok.json.executionId);
    expect(single.json).toEqual(items[0]);
    expect((await getExecution(t.a.account.accountId, ok.json.executionId))?.status).toBe('SUCCEEDED');
  });
});

describe('pages and who may read', () => {
  it('pages through refusals and runs newest first, each request once', async () => {
    const t = await given();
    const w = await t.hook({ secretKey: SECRET });
    const sent: string[] = [];
    for (let i = 0; i < 7; i++) {
      const body = JSON.stringify({ i });
      // Every third is accepted; the others refused. The log writes at most once a second in an instance: read it between.
      const res = await t.trigger(w.webhookId, body, { 'x-webhook-signature': i % 3 === 0 ? sign(body) : 'sha256=00' });
      sent.push(body);
      expect(res.status).toBe(i % 3 === 0 ? 200 : 401);
      await t.log(w.webhookId, { limit: '1' });
    }
    const pages = await t.all(w.webhookId, 2);
    expect(pages.items.map((i) => i.body)).toEqual([...sent].reverse());
    expect(pages.items.map((i) => i.status)).toEqual([200, 401, 401, 200, 401, 401, 200]);
  });

  it("another account's admin and a member who does not own the webhook get 404, for the log, a request and a replay", async () => {
    const t = await given();
    const w = await t.hook({ secretKey: SECRET });
    expectProblem(await t.trigger(w.webhookId, '{}', { 'x-webhook-signature': 'sha256=00' }), 401, 'INVALID_SIGNATURE');
    const [r] = (await t.all(w.webhookId)).items;
    const stranger = await sessionOf((await givenAccount()).admin.email);
    const member = await sessionOf(t.a.member.email);
    for (const as of [stranger, member]) {
      expectProblem(await t.log(w.webhookId, {}, as), 404, 'WEBHOOK_NOT_FOUND');
      expectProblem(await t.one(w.webhookId, r.requestId, as), 404, 'WEBHOOK_NOT_FOUND');
      expectProblem(await t.replay(w.webhookId, r.requestId, randomUUID(), as), 404, 'WEBHOOK_NOT_FOUND');
    }
    // Another webhook's request id, and ids of nothing, are not in this log.
    const w2 = await t.hook({ secretKey: SECRET });
    expectProblem(await t.one(w2.webhookId, r.requestId), 404, 'REQUEST_NOT_FOUND');
    expectProblem(await t.one(w.webhookId, `ex_${'0'.repeat(26)}`), 404, 'REQUEST_NOT_FOUND');
  });
});

describe('replay', () => {
  it('a request refused while disabled, replayed once fixed: a run with the same body and replayOf, once per Idempotency-Key, audited', async () => {
    const t = await given();
    const w = await t.hook({ secretKey: SECRET, enabled: false, variableMapping: { orderId: 'id' } });
    const body = JSON.stringify({ id: 'ord-7', extra: true });
    expectProblem(await t.trigger(w.webhookId, body, { 'x-webhook-signature': sign(body) }), 409, 'WEBHOOK_DISABLED');
    const [r] = (await t.all(w.webhookId)).items;
    // Still disabled: the current configuration's check applies.
    expectProblem(await t.replay(w.webhookId, r.requestId, 'k-1'), 409, 'WEBHOOK_DISABLED');
    expect((await t.update(w.webhookId, { enabled: true })).status).toBe(200);
    expectProblem(await t.replay(w.webhookId, r.requestId), 400, 'IDEMPOTENCY_KEY_REQUIRED');

    const first = await t.replay(w.webhookId, r.requestId, 'k-1');
    expect(first.status, first.body).toBe(202);
    expect(first.json).toMatchObject({ webhookId: w.webhookId, replayOf: r.requestId });
    expect(first.headers.location).toBe(`/api/v1/executions/${first.json.executionId}`);
    const run = await getExecution(t.a.account.accountId, first.json.executionId);
    expect(run).toMatchObject({ replayOf: r.requestId, trigger: 'webhook', payload: JSON.parse(body), status: 'SUCCEEDED' });
    expect(run?.variables).toMatchObject({ orderId: 'ord-7' });

    const again = await t.replay(w.webhookId, r.requestId, 'k-1');
    expect(again).toMatchObject({ status: 202, json: { executionId: first.json.executionId } });
    expect(again.headers['idempotent-replayed']).toBe('true');
    const second = await t.replay(w.webhookId, r.requestId, 'k-2');
    expect(second.json.executionId).not.toBe(first.json.executionId);

    // The replayed runs are no requests the webhook received: the log still holds the one refusal.
    expect((await t.all(w.webhookId)).items.map((i) => i.requestId)).toEqual([r.requestId]);
    const audit = await listAuditEntries({ accountId: t.a.account.accountId, action: 'webhook.request_replayed' }, 10);
    expect(audit.items).toHaveLength(2);
    expect(audit.items.map((e) => e.details?.executionId).sort()).toEqual([first.json.executionId, second.json.executionId].sort());
    expect(audit.items[0]).toMatchObject({
      actor: { kind: 'user', userId: t.a.admin.userId },
      object: { type: 'webhook', id: w.webhookId },
      details: { requestId: r.requestId },
    });
  });

  it('an accepted request is replayed with its recorded body; a key reused for another request is 409', async () => {
    const t = await given();
    const w = await t.hook({ secretKey: SECRET });
    const body = JSON.stringify({ v: 1 });
    const ok = await t.trigger(w.webhookId, body, { 'x-webhook-signature': sign(body) });
    const replay = await t.replay(w.webhookId, ok.json.executionId, 'same');
    expect(replay.status, replay.body).toBe(202);
    expect(await getExecution(t.a.account.accountId, replay.json.executionId)).toMatchObject({
      replayOf: ok.json.executionId,
      payload: { v: 1 },
    });
    const other = await t.trigger(w.webhookId, body, { 'x-webhook-signature': sign(body) });
    expectProblem(await t.replay(w.webhookId, other.json.executionId, 'same'), 409, 'IDEMPOTENCY_KEY_REUSED');
  });

  it('a refused signature is not replayable (409), and the recorded address of a refusal is checked against the allowlist as it is now', async () => {
    const t = await given();
    const w = await t.hook({ secretKey: SECRET, allowedSourceIps: ['198.51.100.0/24'] });
    const body = JSON.stringify({ a: 1 });
    expectProblem(await t.trigger(w.webhookId, body, { 'x-webhook-signature': 'sha256=00' }), 401, 'INVALID_SIGNATURE');
    await t.log(w.webhookId);
    expectProblem(await t.trigger(w.webhookId, body, { 'x-webhook-signature': sign(body) }, '192.0.2.5'), 403, 'IP_NOT_ALLOWED');
    const [fenced, signature] = (await t.all(w.webhookId)).items;
    expect(signature.code).toBe('INVALID_SIGNATURE');
    expectProblem(await t.replay(w.webhookId, signature.requestId, 'a'), 409, 'REQUEST_NOT_REPLAYABLE');
    // Not fixed yet: the recorded address is still outside the allowlist.
    expectProblem(await t.replay(w.webhookId, fenced.requestId, 'b'), 403, 'IP_NOT_ALLOWED');
    expect((await t.update(w.webhookId, { allowedSourceIps: ['198.51.100.0/24', '192.0.2.0/24'] })).status).toBe(200);
    caches.webhooks.delete(w.webhookId);
    const replayed = await t.replay(w.webhookId, fenced.requestId, 'b');
    expect(replayed.status, replayed.body).toBe(202);
  });
});

describe('a flood of refusals', () => {
  it(`1,000 refused requests in a burst leave at most ${INBOUND_LOG_SIZE} recorded, every one counted by code, and no 5xx`, async () => {
    const t = await given();
    const w = await t.hook({ secretKey: SECRET });
    const statuses = new Map<number, number>();
    const BURST = 1000;
    for (let i = 0; i < BURST; i += 50) {
      const answers = await Promise.all(
        Array.from({ length: 50 }, (_, k) => t.trigger(w.webhookId, JSON.stringify({ n: i + k }), { 'x-webhook-signature': 'sha256=00' })),
      );
      for (const a of answers) statuses.set(a.status, (statuses.get(a.status) ?? 0) + 1);
    }
    expect(
      [...statuses.keys()].every((s) => s === 401 || s === 429),
      JSON.stringify([...statuses]),
    ).toBe(true);
    const { items, refused } = await t.all(w.webhookId, 100);
    expect(items.length).toBeGreaterThan(0);
    expect(items.length).toBeLessThanOrEqual(INBOUND_LOG_SIZE);
    expect(Object.values(refused).reduce((x, y) => x + y, 0)).toBe(BURST);
    // The newest are the ones kept: the last batch of the burst is in the log.
    expect(Math.max(...items.map((i) => JSON.parse(i.body).n))).toBeGreaterThanOrEqual(BURST - 50);
  });

  it(`an instance writes at most ${REFUSALS_PER_FLUSH} refusals and ${REFUSAL_BYTES_PER_FLUSH / 1024} KiB of them a flush, the newest always; every one is counted`, async () => {
    const t = await given();
    const w = await t.hook({ secretKey: SECRET });
    const refuse = (body: string) => t.trigger(w.webhookId, body, { 'x-webhook-signature': 'sha256=00' }, '198.51.100.77');
    const big = (n: number) => JSON.stringify({ n, pad: 'x'.repeat(INBOUND_BODY_BYTES) });
    // Within one flush (the last write counts as just made): three large bodies, of which the newest is kept
    // whole and one more would pass the bytes a flush writes; then twelve small ones, of which the newest ten.
    await flushRefusals();
    await flushRefusals(Date.now() + 60_000);
    for (const n of [1, 2, 3]) expect((await refuse(big(n))).status).toBe(401);
    await flushRefusals();
    await flushRefusals(Date.now() + 60_000);
    for (let n = 4; n < 16; n++) expect((await refuse(JSON.stringify({ n }))).status).toBe(401);
    await flushRefusals();
    const { items, refused } = await t.all(w.webhookId);
    expect(items.map((i) => Number(/"n":(\d+)/.exec(i.body)?.[1]))).toEqual([15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 3]);
    expect(refused).toEqual({ INVALID_SIGNATURE: 15 });
  });
});
