import { ulid } from 'ulid';
import { beforeAll, describe, expect, it } from 'vitest';
import { handler as overview } from '../../functions/http/console/overview.ts';
import { handler as fireHandler } from '../../functions/schedule/fire.ts';
import { handler as listExecutions } from '../../functions/http/v1/executions/list.ts';
import { putNew } from '../../shared/db/batch.ts';
import { flushCounts } from '../../shared/db/counters.ts';
import { type Execution, executionListings, getExecution } from '../../shared/db/entities/execution.ts';
import { executionItem } from '../../shared/db/entities/execution-writes.ts';
import { createSchedule } from '../../shared/domain/schedules.ts';
import { runOverview } from '../../shared/domain/run-overview.ts';
import { createWorkflow } from '../../shared/domain/workflows.ts';
import { cancelRun } from '../../shared/engine/cancel.ts';
import { WorkflowDefinition } from '../../shared/engine/definition.ts';
import { HeldRun } from '../../shared/engine/session.ts';
import { processRunMessage } from '../../shared/engine/worker.ts';
import { CreateScheduleBody } from '../../shared/schemas/schedules.ts';
import { takeRunMessages, useOwnQueues } from '../support/engine.ts';
import { givenAccount } from '../support/fixtures.ts';
import { givenKeyHooks } from '../support/key-hooks.ts';
import { apiEvent, invoke, lambdaContext } from '../support/http.ts';
import { sessionOf } from '../support/sessions.ts';

// The overview's counts (docs/console.md "The overview"): every run counted as it starts and ends,
// per account and hour, by the functions that move it (batched, written at their flush), equal to what
// the API lists; an end made twice at once counts once.

beforeAll(() => useOwnQueues());

/** n % 7 == 0 fails BAD_INPUT, n % 11 == 0 (and not % 7) fails UPSTREAM_DOWN, the rest succeed: all inline. */
const ROUTED = {
  variables: { n: { type: 'number', default: 0 } },
  steps: [
    {
      id: 'route',
      type: 'switch',
      cases: [
        { when: '{% $vars.n % 7 = 0 %}', next: 'bad' },
        { when: '{% $vars.n % 11 = 0 %}', next: 'down' },
      ],
      default: 'ok',
    },
    { id: 'ok', type: 'set', values: { fine: true }, next: '$end' },
    { id: 'bad', type: 'fail', code: 'BAD_INPUT', message: 'bad <b>input</b>' },
    { id: 'down', type: 'fail', code: 'UPSTREAM_DOWN', message: 'down' },
  ],
};
/** Queued (a delay is no inline step): cancelled while PENDING. */
const WAITS = { steps: [{ id: 'nap', type: 'delay', seconds: 60 }] };

async function givenHooks() {
  const { a, hook } = await givenKeyHooks();
  const trigger = async (definition: object) => {
    const { trigger } = await hook(definition);
    return async (body: object) => (await trigger(body)).executionId;
  };
  return { a, routed: await trigger(ROUTED), waits: await trigger(WAITS) };
}

/** Every run the API lists for the account, counted by status. */
async function apiCounts(token: string) {
  const counts: Record<string, number> = {};
  let cursor: string | undefined;
  do {
    const res = await invoke(
      listExecutions,
      apiEvent({
        path: '/api/v1/executions',
        query: { limit: '100', ...(cursor ? { cursor } : {}) },
        headers: { authorization: `Bearer ${token}` },
      }),
    );
    expect(res.status, res.body).toBe(200);
    for (const e of res.json.items as { status: string }[]) counts[e.status] = (counts[e.status] ?? 0) + 1;
    cursor = res.json.nextCursor ?? undefined;
  } while (cursor);
  return counts;
}

async function overviewHtml(email: string, query: Record<string, string> = {}) {
  const token = await sessionOf(email);
  const event = { ...apiEvent({ method: 'GET', path: '/console', query }), cookies: [`flowgate_session=${token}`] };
  return (await overview(event, lambdaContext())) as { statusCode: number; body: string };
}

/** 8 at a time, in order. */
async function inBatches<T>(n: number, fn: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < n; i += 8) out.push(...(await Promise.all(Array.from({ length: Math.min(8, n - i) }, (_, j) => fn(i + j)))));
  return out;
}

describe('the overview counts every run', () => {
  it('500 inline webhook runs (some failing with two codes) and 3 cancelled: the counts equal the API list by status', async () => {
    const h = await givenHooks();
    const accountId = h.a.account.accountId;
    await inBatches(500, (n) => h.routed({ n: n + 1 }));
    const queued = await inBatches(3, () => h.waits({}));
    for (const id of queued) await cancelRun(accountId, id, 'not needed');
    // A run that outgrew its trigger's share of time (a busy machine) was queued: the worker ends it.
    for (let batch = await takeRunMessages(); batch.length > 0; batch = await takeRunMessages()) {
      for (const m of batch) await processRunMessage(m, { remainingMs: () => 60_000 });
    }
    await flushCounts();

    const api = await apiCounts(h.a.adminKey.token);
    const bad = Array.from({ length: 500 }, (_, i) => i + 1).filter((n) => n % 7 === 0).length;
    const down = Array.from({ length: 500 }, (_, i) => i + 1).filter((n) => n % 7 !== 0 && n % 11 === 0).length;
    expect(api).toEqual({ SUCCEEDED: 500 - bad - down, FAILED: bad + down, CANCELLED: 3 });

    const o = await runOverview(accountId, '24h');
    expect(o.started).toBe(503);
    expect(Object.fromEntries(o.ends.filter(([, c]) => c > 0))).toEqual(api);
    expect(o.errors).toEqual([
      ['BAD_INPUT', bad],
      ['UPSTREAM_DOWN', down],
    ]);
    expect(o.hours).toHaveLength(24);
    expect(o.hours.reduce((s, x) => s + x.started, 0)).toBe(503);
    expect((await runOverview(accountId, '7d')).hours).toHaveLength(168);

    // The page shows the same figures, each status a link to the runs list filtered by it.
    const page = await overviewHtml(h.a.admin.email);
    expect(page.statusCode).toBe(200);
    const since = encodeURIComponent(new Date(o.since).toISOString());
    expect(page.body).toContain(`href="/console/runs?status=FAILED&amp;from=${since}"`);
    expect(page.body).toMatch(new RegExp(`status-FAILED">FAILED</span></a></th><td>${bad + down}</td>`));
    expect(page.body).toMatch(new RegExp(`status-SUCCEEDED">SUCCEEDED</span></a></th><td>${500 - bad - down}</td>`));
    expect(page.body).toContain('<code>BAD_INPUT</code>');
    // A run's text is escaped where shown (the last failed runs' messages).
    expect(page.body).toContain('bad &lt;b>input&lt;/b>');
    expect(page.body).not.toContain('<b>input</b>');

    // The 7-day span is a link with a query parameter; an unknown span is refused with a page, not a 5xx.
    expect(page.body).toContain('href="/console?span=7d"');
    expect((await overviewHtml(h.a.admin.email, { span: '7d' })).body).toContain('Runs in the last 7 days');
    expect((await overviewHtml(h.a.admin.email, { span: '1y' })).statusCode).toBe(400);
  }, 240_000);

  it("a schedule fire writes its run's start before it returns: nothing else flushes that function on AWS", async () => {
    const a = await givenAccount();
    const accountId = a.account.accountId;
    const actor = { kind: 'session', accountId, userId: a.admin.userId, role: 'admin', sessionId: '' } as const;
    const definition = WorkflowDefinition.parse({ steps: [{ id: 'nap', type: 'delay', seconds: 60 }] });
    const workflow = await createWorkflow(actor, { name: 'nightly', definition, recovery: false, editors: [] });
    const { scheduleId } = await createSchedule(actor, workflow.workflowId, CreateScheduleBody.parse({ expression: 'rate(1 hour)' }));
    const out = await fireHandler({ accountId, scheduleId, scheduledTime: new Date().toISOString() });
    expect(out).toMatchObject({ outcome: 'fired' });
    // No flushCounts here: what the overview reads is what the fire's own invocation wrote.
    expect((await runOverview(accountId, '24h')).started).toBe(1);
  });

  it("another account's runs are not counted", async () => {
    const other = await givenAccount();
    const o = await runOverview(other.account.accountId, '24h');
    expect(o.started).toBe(0);
    expect(o.ends.every(([, c]) => c === 0)).toBe(true);
  });
});

describe('an end made twice at once counts once', () => {
  async function heldRun(accountId: string, leaseMs = 60_000) {
    const now = Date.now();
    const executionId = `ex_${ulid(now).toLowerCase()}`;
    const e: Execution = {
      executionId,
      accountId,
      workflowId: 'wf_x',
      trigger: 'api',
      status: 'RUNNING',
      recovery: false,
      variables: {},
      steps: [],
      outputs: {},
      nextStep: 0,
      startedAt: now,
      updatedAt: now,
      seq: 1,
      lease: { owner: 'worker-1', expiresAt: now + leaseMs },
    } as Execution;
    await putNew([{ ...executionItem(e), ...executionListings(e) }]);
    return e;
  }

  it('two ends of one held run (a redelivered message): one write wins, one FAILED counted', async () => {
    const a = await givenAccount();
    const accountId = a.account.accountId;
    const e = await heldRun(accountId);
    await Promise.all(
      [1, 2].map(() => new HeldRun(structuredClone(e), undefined, 'worker-1').fail({ code: 'TWICE', message: 'ended twice' })),
    );
    await flushCounts();
    expect((await getExecution(accountId, e.executionId))?.status).toBe('FAILED');
    const o = await runOverview(accountId, '24h');
    expect(Object.fromEntries(o.ends)).toMatchObject({ FAILED: 1, SUCCEEDED: 0, CANCELLED: 0 });
    expect(o.errors).toEqual([['TWICE', 1]]);
  });

  it('two cancels of one run at once: one CANCELLED counted, the other refused', async () => {
    const a = await givenAccount();
    const accountId = a.account.accountId;
    // Its lease ran out: a cancel ends it at once rather than asking the worker.
    const e = await heldRun(accountId, -1);
    const results = await Promise.allSettled([cancelRun(accountId, e.executionId, 'a'), cancelRun(accountId, e.executionId, 'b')]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    await flushCounts();
    const o = await runOverview(accountId, '24h');
    expect(Object.fromEntries(o.ends)).toMatchObject({ CANCELLED: 1, FAILED: 0 });
  });
});
