import { createServer, type Server } from 'node:http';
import { TransactionCanceledException, TransactionConflictException } from '@aws-sdk/client-dynamodb';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { handler as decideHandler } from '../../functions/http/approvals/decide.ts';
import { handler as cancelHandler } from '../../functions/http/v1/executions/cancel.ts';
import { handler as rerunHandler } from '../../functions/http/v1/executions/rerun.ts';
import { handler as resumeHandler } from '../../functions/http/v1/executions/resume.ts';
import { handler as startupSweep } from '../../functions/sweep/startup.ts';
import { db, queue } from '../../shared/clients.ts';
import { dispatchGraceMs } from '../../shared/db/entities/execution-index.ts';
import { getApproval, listApprovalsByStatus } from '../../shared/db/entities/approval.ts';
import { listEvents } from '../../shared/db/entities/run-events.ts';
import { type Execution, getExecution } from '../../shared/db/entities/execution.ts';
import { expireDueApprovals } from '../../shared/domain/expiry.ts';
import { createKey } from '../../shared/domain/keys.ts';
import { createWorkflow } from '../../shared/domain/workflows.ts';
import { WorkflowDefinition } from '../../shared/engine/definition.ts';
import type { RunMessage } from '../../shared/engine/dispatch.ts';
import { sweepUnclaimed } from '../../shared/engine/lost-messages.ts';
import { ORPHANED_PENDING_MS, sweepCrashed, sweepRestart } from '../../shared/engine/recovery.ts';
import { readStats } from '../../shared/db/entities/webhook.ts';
import { startRun } from '../../shared/engine/runs.ts';
import { LEASE_MS, processRunMessage } from '../../shared/engine/worker.ts';
import { invoke as invokeFunction, workerFunction } from '../../infra/local/lambda.ts';
import { config, resetConfig } from '../../shared/config.ts';
import { logger } from '../../shared/logger.ts';
import { resetMetrics } from '../../shared/metrics.ts';
import { takeRunMessages, useOwnQueues, useOwnTable } from '../support/engine.ts';
import { givenAccount } from '../support/fixtures.ts';
import { apiEvent, invoke } from '../support/http.ts';

// Restart and crash semantics (docs/runs-and-events.md "Restarts, crashes and INTERRUPTED runs") on a table of this file's own: the sweeps read the
// whole table, and must neither see nor touch the runs of test files running beside this one.

let target: Server;
let base: string;
const hits = new Map<string, number>();
let account: Awaited<ReturnType<typeof givenAccount>>;
let other: Awaited<ReturnType<typeof givenAccount>>;

beforeAll(async () => {
  await useOwnTable();
  await useOwnQueues({ HTTP_STEP_ALLOWLIST: '127.0.0.1/32' });
  target = createServer((req, res) => {
    hits.set(req.url ?? '/', (hits.get(req.url ?? '/') ?? 0) + 1);
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
  });
  await new Promise<void>((r) => target.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(target.address() as { port: number }).port}`;
  [account, other] = await Promise.all([givenAccount(), givenAccount()]);
});
afterAll(() => {
  target.closeAllConnections();
  target.close();
});

const actor = () => ({ accountId: account.account.accountId, userId: account.admin.userId, role: 'admin' as const });
const approvalFlow = (approval: Record<string, unknown> = {}) => ({
  variables: { env: { type: 'string', default: 'staging' } },
  steps: [
    { id: 'prepare', type: 'set', values: { prepared: true } },
    { id: 'approve', type: 'manual_approval', title: 'Ship?', reviewers: ['role:admin'], ...approval },
    { id: 'ship', type: 'set', values: { shipped: true } },
  ],
});
const callFlow = (path: string) => ({
  steps: [
    { id: 'call', type: 'http_request', url: `${base}${path}` },
    { id: 'after', type: 'set', values: { done: true } },
  ],
});

async function workflowOf(definition: unknown, recovery = false) {
  return createWorkflow(actor(), { name: 'recovery', definition: WorkflowDefinition.parse(definition), recovery, editors: [] });
}
/** Start a run and take its queue message off the queue (the test delivers it, or holds it back). */
async function started(
  definition: unknown,
  trigger: 'webhook' | 'api',
  opts: { recovery?: boolean; variables?: Record<string, unknown>; now?: number } = {},
) {
  const workflow = await workflowOf(definition, opts.recovery);
  const { execution } = await startRun(
    {
      workflow,
      trigger,
      variables: opts.variables ?? {},
      startedBy: account.admin.userId,
      ...(trigger === 'webhook' ? { webhookId: 'wh_test', extra: { payload: { order: 42 }, authMode: 'open' } } : {}),
    },
    opts.now,
  );
  const [message] = await takeRunMessages(1);
  expect(message?.executionId).toBe(execution.executionId);
  return { execution, message: message as RunMessage };
}
const deliver = (m: RunMessage, now?: number) => processRunMessage(m, { remainingMs: () => 30_000, ...(now ? { now: () => now } : {}) });
/** Deliver every queued message (and those they cause) until the queue is empty. */
async function drain() {
  for (let messages = await takeRunMessages(); messages.length; messages = await takeRunMessages()) {
    for (const m of messages) await deliver(m);
  }
}
const read = (e: Pick<Execution, 'accountId' | 'executionId'>) => getExecution(e.accountId, e.executionId) as Promise<Execution>;
const events = async (e: Execution) => (await listEvents(e.accountId, e.executionId, 100)).items;
const eventTypes = async (e: Execution) => (await events(e)).map((ev) => ev.type);

/**
 * The worker dies mid-run: its next transaction write fails. `remainingMs`: the time its invocation
 * had (a negative one gives a lease that is over at once, as if its worker died long ago).
 */
async function crashMidStep(m: RunMessage, remainingMs = 30_000) {
  const client = db();
  const send = client.send.bind(client);
  const spy = vi.spyOn(client, 'send').mockImplementation((async (command: unknown, ...rest: unknown[]) => {
    if (command instanceof TransactWriteCommand) {
      spy.mockRestore();
      throw new Error('simulated crash');
    }
    return (send as (...a: unknown[]) => unknown)(command, ...rest);
  }) as never);
  await expect(processRunMessage(m, { remainingMs: () => remainingMs })).rejects.toThrow('simulated crash');
  spy.mockRestore();
}

/**
 * DynamoDB refuses the next writes of these kinds for a transaction in flight on their item, as it
 * does under concurrency on AWS (DynamoDB Local serializes transactions and never does): a stub for a
 * fault the emulator cannot produce. Returns how many refusals are still to come.
 */
function refuseForConflict(...kinds: ('update' | 'transaction')[]) {
  const client = db();
  const send = client.send.bind(client);
  const pending = [...kinds];
  const spy = vi.spyOn(client, 'send').mockImplementation((async (command: unknown, ...rest: unknown[]) => {
    const kind = command instanceof TransactWriteCommand ? 'transaction' : command instanceof UpdateCommand ? 'update' : undefined;
    const i = kind ? pending.indexOf(kind) : -1;
    if (i >= 0) {
      pending.splice(i, 1);
      if (pending.length === 0) spy.mockRestore();
      throw kind === 'transaction'
        ? new TransactionCanceledException({
            message: 'Transaction cancelled, please refer cancellation reasons for specific reasons [TransactionConflict, None]',
            $metadata: {},
          })
        : new TransactionConflictException({ message: 'Transaction is ongoing for the item', $metadata: {} });
    }
    return (send as (...a: unknown[]) => unknown)(command, ...rest);
  }) as never);
  return () => pending.length;
}

const key = () => ({ authorization: `Bearer ${account.adminKey.token}` });
const call = (handler: Parameters<typeof invoke>[0], action: string, executionId: string, headers = key(), body?: object) =>
  invoke(
    handler,
    apiEvent({
      method: 'POST',
      path: `/api/v1/executions/${executionId}/${action}`,
      params: { executionId },
      headers,
      ...(body ? { body } : {}),
    }),
  );

describe('the startup sweep', () => {
  it('interrupts every webhook run in progress exactly once, never replays it, and touches nothing else', async () => {
    const pending = await started(approvalFlow(), 'webhook');
    const waiting = await started(approvalFlow(), 'webhook');
    await deliver(waiting.message);
    const runningPath = `/running/${Math.random()}`;
    const running = await started(callFlow(runningPath), 'webhook');
    await crashMidStep(running.message); // RUNNING, mid-step, its lease still live
    const finished = await started(callFlow(`/finished/${Math.random()}`), 'webhook');
    await deliver(finished.message);
    const apiWaiting = await started(approvalFlow(), 'api');
    await deliver(apiWaiting.message);
    const apiPending = await started(approvalFlow(), 'api');

    expect((await read(waiting.execution)).status).toBe('WAITING_APPROVAL');
    expect((await read(running.execution)).status).toBe('RUNNING');
    expect((await read(finished.execution)).status).toBe('SUCCEEDED');
    const untouched = await Promise.all([finished, apiWaiting, apiPending].map((r) => read(r.execution)));
    const approvalId = (await read(waiting.execution)).approvalId as string;
    const accepted = async () => (await readStats('wh_test', Date.now())).accepted;
    const counted = await accepted();

    // As `npm start` runs it (a real restart), or a stack with restartSweep "all".
    const first = await startupSweep({ rule: 'all' });
    expect(first).toEqual({ ok: true, interrupted: 3, redispatched: 0, spared: 0 });
    // The run interrupted before any worker claimed it counts its trigger now (the others did at their claim).
    expect(await accepted()).toBe(counted + 1);
    for (const [run, from] of [
      [pending, 'PENDING'],
      [waiting, 'WAITING_APPROVAL'],
      [running, 'RUNNING'],
    ] as const) {
      const e = await read(run.execution);
      expect(e).toMatchObject({ status: 'INTERRUPTED', interruptReason: 'restart', interruptedAt: expect.any(Number) });
      expect(e.lease).toBeUndefined();
      expect(e.dispatch).toBeUndefined();
      const interrupted = (await events(e)).filter((ev) => ev.type === 'execution.interrupted');
      expect(interrupted).toHaveLength(1);
      expect(interrupted[0]?.data).toMatchObject({ reason: 'restart', from });
    }
    // The request stays on the run, for audit and a manual rerun.
    expect((await read(pending.execution)).payload).toEqual({ order: 42 });
    // The interrupted run's approval stays pending, and listed.
    expect((await getApproval(account.account.accountId, approvalId))?.status).toBe('PENDING');
    const listed = await listApprovalsByStatus(account.account.accountId, 'PENDING', 100);
    expect(listed.items.map((a) => a.approvalId)).toContain(approvalId);
    // Finished runs and API runs are exactly as they were.
    expect(await Promise.all([finished, apiWaiting, apiPending].map((r) => read(r.execution)))).toEqual(untouched);

    // Twice in a row: the second sweep finds nothing and changes nothing.
    const after = await Promise.all([pending, waiting, running].map((r) => read(r.execution)));
    expect(await startupSweep({ rule: 'all' })).toEqual({ ok: true, interrupted: 0, redispatched: 0, spared: 0 });
    expect(await Promise.all([pending, waiting, running].map((r) => read(r.execution)))).toEqual(after);
    expect(await accepted()).toBe(counted + 1);

    // No replay: the pending run's original message, delivered now, runs nothing.
    await deliver(pending.message);
    await deliver(running.message, Date.now() + LEASE_MS + 1_000);
    expect(await Promise.all([pending, running].map((r) => read(r.execution)))).toEqual([after[0], after[2]]);
    expect(hits.get(runningPath)).toBe(1);
    // (The API run waits for approval now, like the other: no message outstanding for the next test.)
    await deliver(apiPending.message);
    expect((await read(apiPending.execution)).status).toBe('WAITING_APPROVAL');
  });

  it('interrupts each run once when sweeps run concurrently, and re-sends the messages of waiting API runs when asked (local mode)', async () => {
    const workflow = await workflowOf(approvalFlow());
    const webhookRuns = await Promise.all(
      Array.from({ length: 24 }, () =>
        startRun({ workflow, trigger: 'webhook', webhookId: 'wh_test', variables: {} }).then((r) => r.execution),
      ),
    );
    const apiRun = (await startRun({ workflow, trigger: 'api', variables: {} })).execution;
    // Their messages are lost, as local SQS loses them on a restart.
    while ((await takeRunMessages()).length);

    const results = await Promise.all([sweepRestart({ redispatch: true }), sweepRestart(), sweepRestart()]);
    expect(results.reduce((n, r) => n + r.interrupted, 0)).toBe(24);
    for (const e of webhookRuns) {
      expect((await read(e)).status).toBe('INTERRUPTED');
      expect((await eventTypes(e)).filter((t) => t === 'execution.interrupted')).toHaveLength(1);
    }
    expect(results[0]?.redispatched).toBe(1);
    const again = await takeRunMessages();
    expect(again).toEqual([
      { accountId: apiRun.accountId, executionId: apiRun.executionId, dispatch: apiRun.dispatch, sentAt: expect.any(Number) },
    ]);
    await deliver(again[0] as RunMessage);
    expect((await read(apiRun)).status).toBe('WAITING_APPROVAL');
  });
});

describe('the startup sweep after a release on AWS', () => {
  it('"orphaned" (the default) interrupts only what nothing can carry on; "all" interrupts every webhook run in progress', async () => {
    const live = await started(callFlow(`/release/live/${Math.random()}`), 'webhook');
    await crashMidStep(live.message); // RUNNING, its worker's lease live
    const expired = await started(callFlow(`/release/expired/${Math.random()}`), 'webhook');
    await crashMidStep(expired.message, -20_000); // RUNNING, its lease over: its worker died
    const waiting = await started(approvalFlow(), 'webhook');
    await deliver(waiting.message); // WAITING_APPROVAL
    const sleeping = await started({ steps: [{ id: 'wait', type: 'delay', seconds: 600 }] }, 'webhook');
    await deliver(sleeping.message); // RUNNING without a lease: its wake-up message is on its way
    const inFlight = await started(approvalFlow(), 'webhook'); // PENDING, its message just sent
    const overdue = await started(approvalFlow(), 'webhook', { now: Date.now() - ORPHANED_PENDING_MS - 60_000 });
    const api = await started(callFlow(`/release/api/${Math.random()}`), 'api');
    await crashMidStep(api.message, -20_000); // an API run's expired lease is the crash sweep's, not a release's
    const status = async () =>
      Object.fromEntries(
        await Promise.all(
          Object.entries({ live, expired, waiting, sleeping, inFlight, overdue, api }).map(async ([k, r]) => [
            k,
            (await read(r.execution)).status,
          ]),
        ),
      );
    expect(await status()).toEqual({
      live: 'RUNNING',
      expired: 'RUNNING',
      waiting: 'WAITING_APPROVAL',
      sleeping: 'RUNNING',
      inFlight: 'PENDING',
      overdue: 'PENDING',
      api: 'RUNNING',
    });

    // The runs queue is not empty (the messages above are in flight): the overdue run's may be among them.
    expect(await sweepRestart({ rule: 'orphaned' })).toMatchObject({ interrupted: 1, spared: 1, backlog: expect.any(Number) });
    expect(await status()).toEqual({
      live: 'RUNNING',
      expired: 'INTERRUPTED',
      waiting: 'WAITING_APPROVAL',
      sleeping: 'RUNNING',
      inFlight: 'PENDING',
      overdue: 'PENDING',
      api: 'RUNNING',
    });
    // An empty runs queue holds no message of the overdue run: it lost it, and the sweep interrupts it.
    await useOwnQueues({ HTTP_STEP_ALLOWLIST: '127.0.0.1/32' });
    expect(await sweepRestart({ rule: 'orphaned' })).toEqual({ interrupted: 1, redispatched: 0, spared: 0, backlog: 0 });
    expect(await status()).toEqual({
      live: 'RUNNING',
      expired: 'INTERRUPTED',
      waiting: 'WAITING_APPROVAL',
      sleeping: 'RUNNING',
      inFlight: 'PENDING',
      overdue: 'INTERRUPTED',
      api: 'RUNNING',
    });
    for (const r of [expired, overdue]) expect(await read(r.execution)).toMatchObject({ interruptReason: 'restart' });
    // Its approval is kept for a person: the interrupted runs can be resumed, rerun or cancelled as ever.
    expect((await getApproval(account.account.accountId, (await read(waiting.execution)).approvalId as string))?.status).toBe('PENDING');

    await sweepRestart({ rule: 'all' });
    expect(await status()).toEqual({
      live: 'INTERRUPTED',
      expired: 'INTERRUPTED',
      waiting: 'INTERRUPTED',
      sleeping: 'INTERRUPTED',
      inFlight: 'INTERRUPTED',
      overdue: 'INTERRUPTED',
      api: 'RUNNING',
    });
    // The API run's expired lease is the crash sweep's: it interrupts it (no recovery), reason crash.
    expect(await sweepCrashed()).toBe(1);
    expect(await read(api.execution)).toMatchObject({ status: 'INTERRUPTED', interruptReason: 'crash' });
  });
});

describe('a release with a deep runs queue', () => {
  /** The startup sweep as the local stack invokes a function: its own IAM grants enforced, within its timeout. */
  const sweepAsDeployed = () => invokeFunction(workerFunction('sweep/startup', 300), startupSweep, { rule: 'orphaned' });
  /** 20 minutes ago: the queue is that far behind, past ORPHANED_PENDING_MS. */
  const behind = () => Date.now() - ORPHANED_PENDING_MS - 5 * 60_000;

  it('leaves every PENDING run waiting in the queue, however long it has waited, and each runs once its message comes', async () => {
    await useOwnQueues({ HTTP_STEP_ALLOWLIST: '127.0.0.1/32' });
    const workflow = await workflowOf(approvalFlow());
    const deep = await Promise.all(
      Array.from({ length: 30 }, () =>
        startRun({ workflow, trigger: 'webhook', webhookId: 'wh_test', variables: {} }, behind()).then((r) => r.execution),
      ),
    );
    const outcome = await sweepAsDeployed();
    expect(outcome).toMatchObject({ status: 'ok', result: { ok: true, interrupted: 0, spared: 30 } });
    expect(outcome.status === 'ok' && outcome.result.ok && outcome.result.backlog).toBeGreaterThanOrEqual(30);
    for (const e of deep) expect((await read(e)).status).toBe('PENDING');
    // The queue catches up: every run is taken by its message and goes on.
    await drain();
    for (const e of deep) expect((await read(e)).status).toBe('WAITING_APPROVAL');
  });

  it('a failing sweep does not fail the deployment: the function answers (no error for the trigger to fail on), logs, and emits StartupSweepFailed', async () => {
    await useOwnQueues({ HTTP_STEP_ALLOWLIST: '127.0.0.1/32' });
    const workflow = await workflowOf(approvalFlow());
    const overdue = (await startRun({ workflow, trigger: 'webhook', webhookId: 'wh_test', variables: {} }, behind())).execution;
    // The runs queue cannot be read (deleted by hand, or its grant gone): the sweep throws.
    const url = config().RUNS_QUEUE_URL as string;
    process.env.RUNS_QUEUE_URL = `${url}-gone`;
    process.env.POWERTOOLS_METRICS_DISABLED = 'false';
    resetConfig();
    resetMetrics();
    const logged = vi.spyOn(logger, 'error');
    const lines: string[] = [];
    const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: unknown) => {
      lines.push(String(chunk));
      return true;
    });
    let outcome: Awaited<ReturnType<typeof sweepAsDeployed>>;
    let errors: unknown[] = [];
    try {
      outcome = await sweepAsDeployed();
      errors = logged.mock.calls.map(([message]) => message);
    } finally {
      spy.mockRestore();
      logged.mockRestore();
      process.env.RUNS_QUEUE_URL = url;
      process.env.POWERTOOLS_METRICS_DISABLED = 'true';
      resetConfig();
      resetMetrics();
    }
    // CDK's trigger provider fails the deployment on an error of the function, and only then: there is none.
    expect(outcome).toMatchObject({ status: 'ok', result: { ok: false, error: expect.any(String) } });
    const emf = lines.filter((l) => l.includes('"_aws"')).map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(emf.some((m) => m.StartupSweepFailed === 1)).toBe(true);
    expect(emf.some((m) => 'ReleaseInterrupted' in m)).toBe(false);
    expect(errors).toContainEqual(expect.stringContaining('startup sweep failed'));
    // Nothing was half-done: the run waits for the next sweep.
    expect((await read(overdue)).status).toBe('PENDING');
    // And a sweep that works again does its work (the queue is empty: the overdue run's message is gone).
    while ((await takeRunMessages()).length);
    await useOwnQueues({ HTTP_STEP_ALLOWLIST: '127.0.0.1/32' });
    expect(await sweepAsDeployed()).toMatchObject({ status: 'ok', result: { ok: true, interrupted: 1, spared: 0, backlog: 0 } });
    expect((await read(overdue)).status).toBe('INTERRUPTED');
  });
});

describe('crash recovery', () => {
  it('a late redelivery finds the earlier attempt dead: webhook runs and runs without recovery are INTERRUPTED, recovery runs resume', async () => {
    const paths = { webhook: `/c/wh/${Math.random()}`, plain: `/c/plain/${Math.random()}`, recovering: `/c/rec/${Math.random()}` };
    const webhook = await started(callFlow(paths.webhook), 'webhook', { recovery: true });
    const plain = await started(callFlow(paths.plain), 'api');
    const recovering = await started(callFlow(paths.recovering), 'api', { recovery: true });
    for (const run of [webhook, plain, recovering]) await crashMidStep(run.message);

    // Redelivered while the lease is live (another attempt may still be at work): dropped, nothing changes.
    for (const run of [webhook, plain, recovering]) {
      const before = await read(run.execution);
      await deliver(run.message);
      expect(await read(run.execution)).toEqual(before);
    }
    // Redelivered after the lease ran out: the earlier attempt died.
    const late = Date.now() + LEASE_MS + 1_000;
    for (const run of [webhook, plain, recovering]) await deliver(run.message, late);

    for (const run of [webhook, plain]) {
      const e = await read(run.execution);
      expect(e).toMatchObject({ status: 'INTERRUPTED', interruptReason: 'crash' });
      expect((await events(e)).find((ev) => ev.type === 'execution.interrupted')?.data).toMatchObject({ reason: 'crash', stepId: 'call' });
    }
    const resumed = await read(recovering.execution);
    expect(resumed).toMatchObject({ status: 'RUNNING', dispatch: expect.any(String) });
    expect(resumed.lease).toBeUndefined();
    await drain();
    const done = await read(recovering.execution);
    expect(done.status).toBe('SUCCEEDED');
    expect((await events(done)).find((ev) => ev.type === 'execution.resumed')?.data).toMatchObject({ by: 'recovery', reason: 'crash' });
    // The step re-entered once per attempt; the interrupted runs never called again.
    expect(hits.get(paths.recovering)).toBe(2);
    expect(hits.get(paths.webhook)).toBe(1);
    expect(hits.get(paths.plain)).toBe(1);
  });

  it('the scheduled sweep recovers expired leases only, ends a run whose cancel was asked for, and a second sweep changes nothing', async () => {
    const webhook = await started(callFlow(`/s/${Math.random()}`), 'webhook');
    const recovering = await started(callFlow(`/s/${Math.random()}`), 'api', { recovery: true });
    const cancelled = await started(callFlow(`/s/${Math.random()}`), 'api', { recovery: true });
    for (const run of [webhook, recovering, cancelled]) await crashMidStep(run.message);
    const cancel = await call(cancelHandler, 'cancel', cancelled.execution.executionId, key(), { reason: 'not needed' });
    expect(cancel.json).toMatchObject({ status: 'RUNNING', cancelRequested: true });

    // Leases still live: nothing to do.
    expect(await sweepCrashed()).toBe(0);
    const live = await Promise.all([webhook, recovering, cancelled].map((r) => read(r.execution)));
    expect(live.map((e) => e.status)).toEqual(['RUNNING', 'RUNNING', 'RUNNING']);

    const later = Date.now() + LEASE_MS + 1_000;
    expect(await sweepCrashed(later)).toBe(3);
    expect(await read(webhook.execution)).toMatchObject({ status: 'INTERRUPTED', interruptReason: 'crash' });
    expect(await read(cancelled.execution)).toMatchObject({ status: 'CANCELLED', error: { code: 'CANCELLED' } });
    expect(await read(recovering.execution)).toMatchObject({ status: 'RUNNING', dispatch: expect.any(String) });
    const snapshot = await Promise.all([webhook, recovering, cancelled].map((r) => read(r.execution)));
    expect(await sweepCrashed(later)).toBe(0);
    expect(await Promise.all([webhook, recovering, cancelled].map((r) => read(r.execution)))).toEqual(snapshot);
    await drain();
    expect((await read(recovering.execution)).status).toBe('SUCCEEDED');
  });
});

describe('manual handling over v1', () => {
  async function interruptedWhileWaiting(approval: Record<string, unknown> = {}) {
    const run = await started(approvalFlow(approval), 'webhook', { variables: { env: 'prod' } });
    await deliver(run.message);
    await sweepRestart();
    const e = await read(run.execution);
    expect(e.status).toBe('INTERRUPTED');
    return e;
  }
  const decide = (approvalId: string, decision: string) =>
    invoke(
      decideHandler,
      apiEvent({ method: 'POST', path: '/api/webhook-trigger/approval', headers: key(), body: { approvalId, decision } }),
    );

  it('a decision on an interrupted run is recorded (200) but moves nothing; resume then applies it', async () => {
    const e = await interruptedWhileWaiting();
    const decided = await decide(e.approvalId as string, 'approve');
    expect(decided.status).toBe(200);
    expect((await getApproval(e.accountId, e.approvalId as string))?.status).toBe('APPROVED');
    expect(await read(e)).toEqual(e);

    const res = await call(resumeHandler, 'resume', e.executionId);
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ executionId: e.executionId, status: 'RUNNING' });
    expect(res.json).not.toHaveProperty('interruptedAt');
    await drain();
    const done = await read(e);
    expect(done.status).toBe('SUCCEEDED');
    expect(done.variables).toMatchObject({ env: 'prod', prepared: true, shipped: true });
    const types = await eventTypes(done);
    expect(types.slice(types.indexOf('execution.interrupted'))).toEqual([
      'execution.interrupted',
      'execution.resumed',
      'approval.decided',
      'step.succeeded',
      'step.started',
      'step.succeeded',
      'execution.succeeded',
    ]);
  });

  it('resume waits again for a pending approval, takes a rejection or an expiry decided meanwhile', async () => {
    const pending = await interruptedWhileWaiting();
    expect((await call(resumeHandler, 'resume', pending.executionId)).json).toMatchObject({ status: 'WAITING_APPROVAL' });
    expect((await decide(pending.approvalId as string, 'approve')).status).toBe(200);
    await drain();
    expect((await read(pending)).status).toBe('SUCCEEDED');

    const rejected = await interruptedWhileWaiting();
    expect((await decide(rejected.approvalId as string, 'reject')).status).toBe(200);
    // The resumed run takes the rejection recorded meanwhile; its worker applies it and fails the run.
    expect((await call(resumeHandler, 'resume', rejected.executionId)).json).toMatchObject({ status: 'RUNNING' });
    await drain();
    expect(await read(rejected)).toMatchObject({ status: 'FAILED', error: { code: 'APPROVAL_REJECTED' } });

    const expiring = await interruptedWhileWaiting({ timeoutSeconds: 60, onTimeout: 'approve' });
    expect(await expireDueApprovals(Date.now() + 120_000)).toBeGreaterThanOrEqual(1);
    expect((await getApproval(expiring.accountId, expiring.approvalId as string))?.status).toBe('EXPIRED');
    expect((await read(expiring)).status).toBe('INTERRUPTED');
    expect((await call(resumeHandler, 'resume', expiring.executionId)).json).toMatchObject({ status: 'RUNNING' });
    await drain();
    expect(await read(expiring)).toMatchObject({
      status: 'SUCCEEDED',
      outputs: { approve: { decision: 'approve', decidedBy: 'timeout' } },
    });
  });

  it('resumes only INTERRUPTED runs (409), only the account’s own (404), only with WORKFLOW_EXECUTE (403)', async () => {
    const e = await interruptedWhileWaiting();
    const foreign = { authorization: `Bearer ${other.adminKey.token}` };
    expect((await call(resumeHandler, 'resume', e.executionId, foreign)).json).toMatchObject({ status: 404, code: 'EXECUTION_NOT_FOUND' });
    const reader = await createKey(
      { accountId: account.account.accountId, userId: account.admin.userId },
      { name: 'reader', scopes: ['WORKFLOW_READ'], validityDays: 1 },
    );
    expect((await call(resumeHandler, 'resume', e.executionId, { authorization: `Bearer ${reader.token}` })).status).toBe(403);
    expect(await read(e)).toEqual(e);
    expect((await call(resumeHandler, 'resume', e.executionId)).status).toBe(200);
    expect((await call(resumeHandler, 'resume', e.executionId)).json).toMatchObject({ status: 409, code: 'EXECUTION_NOT_INTERRUPTED' });
  });

  it('rerun starts a new run with the same inputs and rerunOf; a run in progress is not rerun', async () => {
    const e = await interruptedWhileWaiting();
    const res = await call(rerunHandler, 'rerun', e.executionId);
    expect(res.status).toBe(202);
    expect(res.json).toMatchObject({ trigger: 'rerun', rerunOf: e.executionId, status: 'PENDING', variables: { env: 'prod' } });
    expect(res.headers.location).toBe(`/api/v1/executions/${res.json.executionId}`);
    const rerun = await read({ accountId: e.accountId, executionId: res.json.executionId });
    expect((await events(rerun))[0]?.data).toMatchObject({ trigger: 'rerun', rerunOf: e.executionId, input: { env: 'prod' } });
    // The new run is in progress: rerunning it is refused; the original stays as it was.
    expect((await call(rerunHandler, 'rerun', rerun.executionId)).json).toMatchObject({ status: 409, code: 'EXECUTION_IN_PROGRESS' });
    expect((await call(rerunHandler, 'rerun', e.executionId, { authorization: `Bearer ${other.adminKey.token}` })).status).toBe(404);
    expect((await read(e)).status).toBe('INTERRUPTED');
    while ((await takeRunMessages()).length);
  });

  it('a write refused for a transaction in flight is tried again: the claim, a checkpoint, a cancel, a resume', async () => {
    const path = `/conflict/${Math.random()}`;
    const run = await started(callFlow(path), 'api');
    let left = refuseForConflict('update', 'transaction');
    await deliver(run.message);
    expect(left()).toBe(0);
    expect((await read(run.execution)).status).toBe('SUCCEEDED');
    expect(hits.get(path)).toBe(1);

    const e = await interruptedWhileWaiting();
    left = refuseForConflict('transaction');
    expect((await call(resumeHandler, 'resume', e.executionId)).json).toMatchObject({ status: 'WAITING_APPROVAL' });
    expect(left()).toBe(0);
    left = refuseForConflict('transaction');
    expect((await call(cancelHandler, 'cancel', e.executionId, key(), {})).json).toMatchObject({ status: 'CANCELLED' });
    expect(left()).toBe(0);
  });

  it('a webhook run interrupted before any worker picked it up takes its workflow when resumed', async () => {
    const workflow = await workflowOf({
      variables: { env: { type: 'string', default: 'dev' } },
      steps: [{ id: 'only', type: 'set', values: { ok: true } }],
    });
    // As the trigger starts it: by reference, no definition until a worker takes it.
    const { execution } = await startRun({
      workflow: { accountId: workflow.accountId, workflowId: workflow.workflowId },
      trigger: 'webhook',
      variables: { n: 1 },
      webhookId: 'wh_test',
    });
    const [message] = await takeRunMessages(1);
    expect(message?.executionId).toBe(execution.executionId);
    await sweepRestart();
    const interrupted = await read(execution);
    expect(interrupted).toMatchObject({ status: 'INTERRUPTED', steps: [] });
    expect(interrupted.workflowVersion).toBeUndefined();
    expect((await events(interrupted)).find((ev) => ev.type === 'execution.interrupted')?.data).toMatchObject({
      from: 'PENDING',
      stepId: null,
    });
    // The original message runs nothing; resume sends a new one, and that claim takes the workflow.
    await deliver(message as RunMessage);
    expect((await read(execution)).status).toBe('INTERRUPTED');
    expect((await call(resumeHandler, 'resume', execution.executionId)).status).toBe(200);
    await drain();
    expect(await read(execution)).toMatchObject({ status: 'SUCCEEDED', variables: { n: 1, env: 'dev', ok: true } });
  });

  it('cancel ends an INTERRUPTED run and its pending approval', async () => {
    const e = await interruptedWhileWaiting();
    const res = await call(cancelHandler, 'cancel', e.executionId, key(), { reason: 'handled by hand' });
    expect(res.json).toMatchObject({ status: 'CANCELLED' });
    expect((await getApproval(e.accountId, e.approvalId as string))?.status).toBe('CANCELLED');
    expect((await events(await read(e))).at(-1)).toMatchObject({ type: 'execution.cancelled', data: { from: 'INTERRUPTED' } });
  });
});

describe('a run handed to a message that never went out', () => {
  /** The next run message this code sends is lost: the invocation was cut off between its write and its send. */
  function loseNextRunMessage() {
    const client = queue();
    const send = client.send.bind(client);
    const spy = vi.spyOn(client, 'send').mockImplementation((async (command: unknown, ...rest: unknown[]) => {
      if (command instanceof SendMessageCommand) {
        spy.mockRestore();
        throw Object.assign(new Error('Runtime exited with error: signal: killed'), { name: 'Runtime.ExitError' });
      }
      return (send as (...a: unknown[]) => unknown)(command, ...rest);
    }) as never);
  }
  const due = (from: number) => from + dispatchGraceMs() + 1_000;
  // The sweep reads the whole table: the runs the tests above left handed to a message are carried on first.
  beforeAll(async () => {
    await sweepUnclaimed(Date.now() + 24 * 60 * 60_000);
    await drain();
  });

  it('a start, a decision and a hand-off between workers are sent again once due, claimed once, and end once', async () => {
    // A start whose message was lost (taken off the queue here and never delivered).
    const start = await started(callFlow(`/u/start/${Math.random()}`), 'webhook');
    // An approval decided, whose message was lost.
    const approval = await started(approvalFlow(), 'api');
    await deliver(approval.message);
    const waiting = await read(approval.execution);
    expect(waiting.status).toBe('WAITING_APPROVAL');
    const decided = await invoke(
      decideHandler,
      apiEvent({
        method: 'POST',
        path: '/api/webhook-trigger/approval',
        headers: key(),
        body: { approvalId: waiting.approvalId, decision: 'approve' },
      }),
    );
    expect(decided.status).toBe(200);
    expect(await takeRunMessages(1)).toHaveLength(1);
    // A worker that let the run go (asleep) and was cut off before sending its next message.
    const sleeper = await started(
      {
        steps: [
          { id: 'nap', type: 'delay', seconds: 1 },
          { id: 'after', type: 'set', values: { woke: true } },
        ],
      },
      'api',
    );
    loseNextRunMessage();
    await expect(deliver(sleeper.message)).rejects.toThrow('signal: killed');
    const asleep = await read(sleeper.execution);
    expect(asleep).toMatchObject({ status: 'RUNNING', dispatch: expect.any(String) });
    expect(asleep.lease).toBeUndefined();

    const runs = [start.execution, approval.execution, sleeper.execution];
    const now = Date.now();
    // Not due yet: nothing is sent (a message may only be late).
    expect(await sweepUnclaimed(now)).toBe(0);
    expect(await takeRunMessages()).toEqual([]);
    // Due: each run's message goes out again, with the dispatch the run waits for, once.
    expect(await sweepUnclaimed(due(now))).toBe(3);
    expect(await sweepUnclaimed(due(now))).toBe(0);
    const resent = await takeRunMessages();
    const waitingFor = await Promise.all(runs.map(read));
    expect(resent.map((m) => [m.executionId, m.dispatch]).sort()).toEqual(waitingFor.map((e) => [e.executionId, e.dispatch]).sort());
    // The late original of the start's message arrives too: one of the two claims the run.
    for (const m of [...resent, start.message]) await deliver(m);
    await drain();
    for (const run of runs) {
      const e = await read(run);
      expect(e.status).toBe('SUCCEEDED');
      const seqs = (await events(e)).map((ev) => ev.seq);
      expect(seqs.filter((x, i) => i > 0 && x === seqs[i - 1])).toEqual([]);
      expect((await eventTypes(e)).filter((t) => t === 'execution.succeeded')).toHaveLength(1);
    }
    // Ended runs leave the index: a later sweep finds nothing.
    expect(await sweepUnclaimed(due(Date.now()) + 60 * 60_000)).toBe(0);
  });

  it('a run asleep until later, or claimed by its message, is not sent again; waiting longer waits longer for the next try', async () => {
    const sleeper = await started({ steps: [{ id: 'nap', type: 'delay', seconds: 600 }] }, 'api');
    await deliver(sleeper.message);
    const asleep = await read(sleeper.execution);
    expect(asleep.wakeAt).toBeGreaterThan(Date.now() + 590_000);
    // Due only from its wake time on.
    expect(await sweepUnclaimed(due(Date.now()))).toBe(0);
    const first = due(asleep.wakeAt as number);
    expect(await sweepUnclaimed(first)).toBe(1);
    // The next try waits as long as the run has waited since it was handed over, not just the grace.
    expect(await sweepUnclaimed(first + dispatchGraceMs() + 1_000)).toBe(0);
    expect(await sweepUnclaimed(first + (first - asleep.updatedAt) + dispatchGraceMs() + 1_000)).toBe(1);
    const copies = await takeRunMessages();
    expect(copies.length).toBeGreaterThanOrEqual(1);
    // The real message (hidden in SQS for 600 s) is not awaited: a copy claims the run and the rest are dropped.
    for (const m of copies) await deliver(m);
    const claimed = await read(sleeper.execution);
    // Claimed by a copy, it sleeps again under a new dispatch, due from its wake time on.
    expect(claimed).toMatchObject({ status: 'RUNNING', wakeAt: asleep.wakeAt });
    expect(claimed.dispatch).not.toBe(asleep.dispatch);
    expect(await sweepUnclaimed(due(Date.now()))).toBe(0);
  });
});
