import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handler as redeliverHandler } from '../../functions/http/deliveries/redeliver.ts';
import { handler as approvalDeliveries } from '../../functions/http/v1/approvals/deliveries.ts';
import { handler as executionDeliveries } from '../../functions/http/v1/executions/deliveries.ts';
import { type Execution, getExecution } from '../../shared/db/entities/execution.ts';
import { createWorkflow } from '../../shared/domain/workflows.ts';
import { WorkflowDefinition } from '../../shared/engine/definition.ts';
import { startRun } from '../../shared/engine/runs.ts';
import { eventually, startWorkers, useOwnQueues } from '../support/engine.ts';
import { givenAccount } from '../support/fixtures.ts';
import { apiEvent, bearer, expectProblem, invoke } from '../support/http.ts';
import { sessionOf } from '../support/sessions.ts';

/**
 * The delivery log of outgoing messages, here the signed event notifications, through the real
 * notifications worker and queue against a local receiver: attempts with status, error and time, the
 * retry schedule (500 then 200; 429 with Retry-After), FAILED after 5 attempts, redelivery (a new
 * attempt on purpose), no secret, token or signature in what the API shows, and tenant isolation.
 */

// The receiver: `/fail-once/...` answers 500 the first time, `/busy/...` 429 with `Retry-After: 2`
// the first time, `/down/...` 500 until `healed` has its path; everything else 200.
type Seen = { path: string; at: number; status: number };
let receiver: Server;
let base: string;
const seen: Seen[] = [];
const healed = new Set<string>();
const firstDone = new Set<string>();
let stopWorkers: () => Promise<unknown>;

beforeAll(async () => {
  // A retry unit of 0.1 s: retries after 1, 1, 2 and 4 s (the default is a minute: 1, 4, 15, 40 min).
  await useOwnQueues({ HTTP_STEP_ALLOWLIST: '127.0.0.1/32', DELIVERY_RETRY_SECONDS: '0.1' });
  receiver = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://receiver').pathname;
    req.resume();
    req.on('end', () => {
      const first = !firstDone.has(path);
      firstDone.add(path);
      let status = 200;
      const headers: Record<string, string> = {};
      if (path.startsWith('/fail-once/') && first) status = 500;
      if (path.startsWith('/busy/') && first) {
        status = 429;
        headers['retry-after'] = '2';
      }
      if (path.startsWith('/down/') && !healed.has(path)) status = 500;
      seen.push({ path, at: Date.now(), status });
      res.writeHead(status, headers).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(receiver.address() as { port: number }).port}`;
  stopWorkers = startWorkers();
});
afterAll(async () => {
  await stopWorkers?.();
  receiver.closeAllConnections();
  await new Promise((r) => receiver.close(r));
});

const SECRET = `whsec_${randomBytes(32).toString('base64')}`;
const tag = () => randomBytes(4).toString('hex');
type Account = Awaited<ReturnType<typeof givenAccount>>;

/** A run of a workflow notifying `urls` of `execution.started` (and the approval's request, when it has one). */
async function givenRun(a: Account, urls: string[], steps: unknown[] = [{ id: 'one', type: 'set', values: { a: 1 } }]) {
  const notifications = urls.map((url) => ({ url, events: ['execution.started', 'approval.requested'], secret: SECRET }));
  const workflow = await createWorkflow(
    { accountId: a.account.accountId, userId: a.admin.userId, role: 'admin' },
    { name: 'delivered', definition: WorkflowDefinition.parse({ steps, notifications }), recovery: false, editors: [] },
  );
  const { execution } = await startRun({ workflow, trigger: 'api', variables: {}, startedBy: a.admin.userId });
  return execution;
}

const list = (key: string, executionId: string, query: Record<string, string> = {}) =>
  invoke(
    executionDeliveries,
    apiEvent({
      path: `/api/v1/executions/${executionId}/deliveries`,
      params: { executionId },
      query,
      headers: bearer(key),
    }),
  );
const redeliver = (session: string, deliveryId: string) =>
  invoke(
    redeliverHandler,
    apiEvent({ method: 'POST', path: `/api/deliveries/${deliveryId}/redeliver`, params: { deliveryId }, headers: bearer(session) }),
  );
const settledDeliveries = (key: string, executionId: string, n: number) =>
  eventually(
    async () => (await list(key, executionId)).json.items as any[],
    (items) => items.length === n && items.every((d) => d.state !== 'PENDING'),
    30_000,
  );

/** Nothing the API shows may hold the target's query token, the signing secret or a signature. */
function expectNoSecrets(body: string | undefined, token: string) {
  expect(body).not.toContain(token);
  expect(body).not.toContain(SECRET);
  expect(body).not.toContain(SECRET.slice('whsec_'.length, 20));
  expect(body).not.toMatch(/v1,[A-Za-z0-9+/=]{20,}/);
}

describe('the delivery log of event notifications', () => {
  it('logs every attempt: 500 then 200 is retried and DELIVERED; 429 waits for its Retry-After; nothing secret is shown', async () => {
    const a = await givenAccount();
    const token = `tok${tag()}`;
    const failOnce = `/fail-once/${tag()}`;
    const busy = `/busy/${tag()}`;
    const execution = await givenRun(a, [`${base}${failOnce}?token=${token}`, `${base}${busy}`]);
    const items = await settledDeliveries(a.adminKey.token, execution.executionId, 2);
    const byPath = (p: string) => seen.filter((s) => s.path === p);
    expect(byPath(failOnce).map((s) => s.status)).toEqual([500, 200]);
    expect(byPath(busy).map((s) => s.status)).toEqual([429, 200]);
    // The receiver's Retry-After (2 s) decided the wait, not the schedule (0.1 s here).
    const [asked, again] = byPath(busy) as [Seen, Seen];
    expect(again.at - asked.at).toBeGreaterThanOrEqual(2000);

    for (const d of items) {
      expect(d).toMatchObject({
        executionId: execution.executionId,
        kind: 'event',
        channel: 'webhook',
        state: 'DELIVERED',
        nextRetryAt: null,
      });
      expect(d.deliveryId).toMatch(/^dl_[0-9a-z]{26}$/);
      expect(d.target).toBe(`${base}/…`);
      expect(d.attempts).toHaveLength(2);
      expect(d.attempts[1]).toEqual({ at: expect.any(Number), status: 200, durationMs: expect.any(Number) });
    }
    const statuses = items.map((d) => d.attempts[0].status).sort();
    expect(statuses).toEqual([429, 500]);
    expect(items.find((d) => d.attempts[0].status === 500).attempts[0].error).toBe(`127.0.0.1:${base.split(':')[2]} answered 500`);
    const res = await list(a.adminKey.token, execution.executionId);
    expectNoSecrets(res.body, token);

    // Pages: one at a time, with a cursor bound to this run.
    const first = await list(a.adminKey.token, execution.executionId, { limit: '1' });
    expect(first.json.items).toHaveLength(1);
    const second = await list(a.adminKey.token, execution.executionId, { limit: '1', cursor: first.json.nextCursor });
    expect(second.json.items.map((d: any) => d.deliveryId)).not.toEqual(first.json.items.map((d: any) => d.deliveryId));
    expect(new Set([...first.json.items, ...second.json.items].map((d: any) => d.deliveryId))).toEqual(
      new Set(items.map((d) => d.deliveryId)),
    );
    const other = await givenRun(a, []);
    expectProblem(await list(a.adminKey.token, other.executionId, { cursor: first.json.nextCursor }), 400, 'INVALID_CURSOR');
  });

  it('fails for good after 5 attempts; an admin redelivers it (a new attempt, on purpose); isolation and refusals', {
    timeout: 60_000,
  }, async () => {
    const [a, b] = await Promise.all([givenAccount(), givenAccount()]);
    const down = `/down/${tag()}`;
    const execution = await givenRun(a, [`${base}${down}`]);
    const [failed] = await settledDeliveries(a.adminKey.token, execution.executionId, 1);
    expect(failed).toMatchObject({ state: 'FAILED', nextRetryAt: null });
    expect(failed.attempts.map((t: any) => t.status)).toEqual([500, 500, 500, 500, 500]);
    expect(seen.filter((s) => s.path === down)).toHaveLength(5);

    // Another account sees neither the run's log nor the delivery; a member may not redeliver.
    const [adminSession, memberSession, otherAdmin] = await Promise.all([
      sessionOf(a.admin.email),
      sessionOf(a.member.email),
      sessionOf(b.admin.email),
    ]);
    expectProblem(await list(b.adminKey.token, execution.executionId), 404, 'EXECUTION_NOT_FOUND');
    expectProblem(await redeliver(otherAdmin, failed.deliveryId), 404, 'DELIVERY_NOT_FOUND');
    expectProblem(await redeliver(memberSession, failed.deliveryId), 403, 'ADMIN_ONLY');
    expectProblem(await redeliver(adminSession, 'dl_00000000000000000000000000'), 404, 'DELIVERY_NOT_FOUND');
    expectProblem(await redeliver(adminSession, 'not-an-id'), 404, 'DELIVERY_NOT_FOUND');

    healed.add(down);
    // Two admins at once: one redelivery is queued, the other finds it in progress.
    const both = await Promise.all([redeliver(adminSession, failed.deliveryId), redeliver(adminSession, failed.deliveryId)]);
    const queued = both.find((r) => r.status === 202);
    expect(queued?.json).toMatchObject({ deliveryId: failed.deliveryId, state: 'PENDING', nextRetryAt: expect.any(Number) });
    expectProblem(both.find((r) => r.status !== 202) as (typeof both)[number], 409, 'DELIVERY_IN_PROGRESS');
    const [done] = await settledDeliveries(a.adminKey.token, execution.executionId, 1);
    expect(done.state).toBe('DELIVERED');
    expect(done.attempts.map((t: any) => t.status).slice(0, 6)).toEqual([500, 500, 500, 500, 500, 200]);
    expect(done.attempts).toHaveLength(6);
    expect(seen.filter((x) => x.path === down).map((x) => x.status)).toEqual([500, 500, 500, 500, 500, 200]);
  });

  it("lists an approval's deliveries for its reviewers only", async () => {
    const [a, b] = await Promise.all([givenAccount(), givenAccount()]);
    const path = `/hook/${tag()}`;
    const execution = await givenRun(
      a,
      [`${base}${path}`],
      [{ id: 'ok', type: 'manual_approval', title: 'Go?', reviewers: ['role:admin'] }],
    );
    const run = await eventually(
      () => getExecution(a.account.accountId, execution.executionId) as Promise<Execution>,
      (e) => e.status === 'WAITING_APPROVAL',
    );
    const approvalId = run.approvalId as string;
    await settledDeliveries(a.adminKey.token, execution.executionId, 2);
    const get = (key: string, id = approvalId) =>
      invoke(
        approvalDeliveries,
        apiEvent({ path: `/api/v1/approvals/${id}/deliveries`, params: { approvalId: id }, headers: bearer(key) }),
      );
    const mine = await get(a.adminKey.token);
    expect(mine.status, mine.body).toBe(200);
    expect(mine.json.items).toEqual([expect.objectContaining({ approvalId, state: 'DELIVERED', kind: 'event' })]);
    expectProblem(await get(a.memberKey.token), 403, 'NOT_A_REVIEWER');
    expectProblem(await get(b.adminKey.token), 404, 'APPROVAL_NOT_FOUND');
  });
});
