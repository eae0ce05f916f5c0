import { DeleteCommand, GetCommand, PutCommand, QueryCommand, ScanCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { db, tableName } from '../../shared/clients.ts';
import { type Approval, approvalKey, getApproval, listApprovalsByStatus } from '../../shared/db/entities/approval.ts';
import { listDueNudges } from '../../shared/db/entities/approval-nudge.ts';
import { type Callback, callbackKey, getCallback } from '../../shared/db/entities/callback.ts';
import { type Execution, getExecution } from '../../shared/db/entities/execution.ts';
import { scheduleKey } from '../../shared/db/entities/schedule.ts';
import { migrate } from '../../shared/db/migrations/index.ts';
import { SWEEP_SHARDS } from '../../shared/db/sweep-shards.ts';
import { decide } from '../../shared/domain/approvals.ts';
import { expireDueCallbacks } from '../../shared/domain/callbacks.ts';
import { expireDueApprovals } from '../../shared/domain/expiry.ts';
import { nudgeDueApprovals } from '../../shared/domain/nudges.ts';
import { repairScheduleDrift } from '../../shared/domain/schedule-drift.ts';
import { createSchedule } from '../../shared/domain/schedules.ts';
import { createWorkflow } from '../../shared/domain/workflows.ts';
import { cancelRun } from '../../shared/engine/cancel.ts';
import { WorkflowDefinition } from '../../shared/engine/definition.ts';
import { startRun } from '../../shared/engine/runs.ts';
import { clock } from '../../shared/schedules/clock.ts';
import { CreateScheduleBody } from '../../shared/schemas/schedules.ts';
import { eventually, startWorkers, useOwnQueues, useOwnTable } from '../support/engine.ts';
import { givenAccount } from '../support/fixtures.ts';

// Approvals, callbacks, due reminders and the schedules' index of the shape before issue 32 (approvals
// and callbacks under their account's partition, the sweeps' partitions unsharded), on a table of its
// own (the sweeps and the migration read all of it): what works between the deploy and the migration
// (docs/deploying.md "Upgrading"), and `npm run admin -- migrate` moving them.

let stopWorkers: () => Promise<unknown>;
beforeAll(async () => {
  await useOwnTable();
  await useOwnQueues();
  stopWorkers = startWorkers();
});
afterAll(async () => {
  await stopWorkers?.();
});

type Account = Awaited<ReturnType<typeof givenAccount>>;
const actor = (a: Account) =>
  ({ kind: 'session', accountId: a.account.accountId, userId: a.admin.userId, role: 'admin', sessionId: 's' }) as const;
const raw = async (Key: Record<string, unknown>) => (await db().send(new GetCommand({ TableName: tableName(), Key }))).Item;
const put = (Item: Record<string, unknown>) => db().send(new PutCommand({ TableName: tableName(), Item }));
const del = (Key: Record<string, unknown>) => db().send(new DeleteCommand({ TableName: tableName(), Key }));
const run = (e: Pick<Execution, 'accountId' | 'executionId'>) => getExecution(e.accountId, e.executionId) as Promise<Execution>;
const until = (e: Pick<Execution, 'accountId' | 'executionId'>, statuses: string[]) =>
  eventually(
    () => run(e),
    (x) => statuses.includes(x.status),
    30_000,
  );

/** A run of `step` in a new workflow, waiting in it. */
async function waitingIn(a: Account, step: Record<string, unknown>, status: 'WAITING_APPROVAL' | 'WAITING_CALLBACK') {
  const definition = WorkflowDefinition.parse({ steps: [step, { id: 'after', type: 'set', values: { done: true } }] });
  const workflow = await createWorkflow(actor(a), { name: 'old shapes', definition, recovery: false, editors: [] });
  const { execution } = await startRun({ workflow, trigger: 'api', variables: {}, startedBy: a.admin.userId });
  return until(execution, [status]);
}
const gate = (extra: Record<string, unknown> = {}) => ({
  id: 'gate',
  type: 'manual_approval',
  title: 'Ship?',
  reviewers: ['role:admin'],
  ...extra,
});
const wait = { id: 'wait', type: 'wait_for_callback', timeoutSeconds: 3600 };

/** The run's approval put back where it was kept before (ACC#<account> / AP#<id>, its index keys unsharded), and its due item. */
async function oldApproval(e: Execution): Promise<Approval> {
  const key = approvalKey(e.accountId, e.approvalId as string);
  const item = (await raw(key)) as Record<string, unknown>;
  await put({
    ...item,
    PK: `ACC#${e.accountId}`,
    SK: `AP#${e.approvalId}`,
    GSI1PK: `ACC#${e.accountId}#AP#${item.status}`,
    ...(item.GSI2PK ? { GSI2PK: 'APPROVAL#EXPIRY' } : {}),
  });
  await del(key);
  for (const n of await listDueNudges(Date.now() + 365 * 86_400_000, 100))
    if (n.approvalId === e.approvalId) {
      await put({ ...((await raw({ PK: n.PK, SK: n.SK })) as Record<string, unknown>), PK: 'APPROVAL#NUDGE' });
      await del({ PK: n.PK, SK: n.SK });
    }
  return item as unknown as Approval;
}

/** The run's callback put back where it was kept before (ACC#<account> / CB#<id>, its deadline unsharded). */
async function oldCallback(e: Execution): Promise<Callback> {
  const key = callbackKey(e.accountId, e.callbackId as string);
  const item = (await raw(key)) as Record<string, unknown>;
  await put({ ...item, PK: `ACC#${e.accountId}`, SK: `CB#${e.callbackId}`, GSI2PK: 'CALLBACK#DEADLINE' });
  await del(key);
  return item as unknown as Callback;
}

/** The schedule's index entry put back in the one partition of before. */
const oldScheduleIndex = (accountId: string, scheduleId: string) =>
  db().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: scheduleKey(accountId, scheduleId),
      UpdateExpression: 'SET GSI2PK = :all',
      ExpressionAttributeValues: { ':all': 'SCHEDULES' },
    }),
  );

const scan = async () => (await db().send(new ScanCommand({ TableName: tableName(), ConsistentRead: true }))).Items ?? [];
const oldItems = async () =>
  (await scan()).filter(
    (i) =>
      (['approval', 'callback'].includes(i.type) && String(i.PK).startsWith('ACC#')) ||
      i.PK === 'APPROVAL#NUDGE' ||
      ['SCHEDULES', 'APPROVAL#EXPIRY', 'CALLBACK#DEADLINE'].includes(i.GSI2PK),
  );
const shardOf = (family: string) => new RegExp(`^${family}#([0-9]+)$`);
const inShard = (value: unknown, family: string) => Number(shardOf(family).exec(String(value))?.[1]) < SWEEP_SHARDS;

describe('npm run admin -- migrate: approvals, callbacks, due reminders, the schedules index', () => {
  it('moves each to its new keys (index keys in their shards), idempotent, leaving what the service wrote since', {
    timeout: 120_000,
  }, async () => {
    const a = await givenAccount({ plan: 'enterprise' });
    const pending = await waitingIn(a, gate({ timeoutSeconds: 3600, remind: { everySeconds: 600, max: 2 } }), 'WAITING_APPROVAL');
    const decided = await waitingIn(a, gate(), 'WAITING_APPROVAL');
    const waiting = await waitingIn(a, wait, 'WAITING_CALLBACK');
    const fresh = await waitingIn(a, gate({ timeoutSeconds: 3600 }), 'WAITING_APPROVAL');
    const workflow = await createWorkflow(actor(a), {
      name: 'scheduled',
      definition: WorkflowDefinition.parse({ steps: [{ id: 's', type: 'set', values: { x: 1 } }] }),
      recovery: false,
      editors: [],
    });
    const schedule = await createSchedule(actor(a), workflow.workflowId, CreateScheduleBody.parse({ expression: 'rate(1 hour)' }));
    await decide({
      principal: {
        kind: 'apiKey',
        accountId: a.account.accountId,
        userId: a.admin.userId,
        keyId: 'k',
        scopes: [],
        plan: 'enterprise',
      } as never,
      approvalId: decided.approvalId as string,
      decision: 'approve',
      channel: 'v1',
      sourceIp: '203.0.113.1',
    });
    await oldApproval(pending);
    await oldApproval(decided);
    await oldCallback(waiting);
    await oldScheduleIndex(a.account.accountId, schedule.scheduleId);
    // One approval, two reminders: the approval itself, its expiry entry and its due item (three items of the old shape with the schedule and callback).
    expect(await oldItems()).toHaveLength(5);

    const dry = await migrate({ dryRun: true, ratePerSecond: 1000 });
    expect(dry.moved).toMatchObject({ approvals: 2, callbacks: 1, 'approval reminders': 1, 'schedule index': 1, deliveries: 0 });
    expect(await oldItems()).toHaveLength(5);

    const done = await migrate({ ratePerSecond: 1000 });
    expect(done.moved).toMatchObject({ approvals: 2, callbacks: 1, 'approval reminders': 1, 'schedule index': 1 });
    expect(await oldItems()).toEqual([]);

    const p = (await raw(approvalKey(pending.accountId, pending.approvalId as string))) as Record<string, unknown>;
    expect(p).toMatchObject({
      SK: 'APPROVAL',
      status: 'PENDING',
      GSI1PK: expect.stringMatching(new RegExp(`^ACC#${pending.accountId}#AP#PENDING#\\d+$`)),
    });
    expect(inShard(p.GSI2PK, 'APPROVAL#EXPIRY')).toBe(true);
    const d = (await raw(approvalKey(decided.accountId, decided.approvalId as string))) as Record<string, unknown>;
    expect(d).toMatchObject({ status: 'APPROVED', GSI1PK: expect.stringMatching(/#AP#APPROVED#\d+$/) });
    expect(d.GSI2PK).toBeUndefined();
    const c = (await raw(callbackKey(waiting.accountId, waiting.callbackId as string))) as Record<string, unknown>;
    expect(c).toMatchObject({ SK: 'CALLBACK', status: 'PENDING' });
    expect(inShard(c.GSI2PK, 'CALLBACK#DEADLINE')).toBe(true);
    const nudges = (await listDueNudges(Date.now() + 86_400_000, 100)).filter((n) => n.approvalId === pending.approvalId);
    expect(nudges).toHaveLength(1);
    expect(inShard(nudges[0]?.PK, 'APPROVAL#NUDGE')).toBe(true);
    const s = (await raw(scheduleKey(a.account.accountId, schedule.scheduleId))) as Record<string, unknown>;
    expect(inShard(s.GSI2PK, 'SCHEDULES')).toBe(true);
    expect(s).toMatchObject({ fires: 0, enabled: true });

    // Read as the service reads them: by id, in the status listing (every shard), the approval written since untouched.
    const listed = (await listApprovalsByStatus(a.account.accountId, 'PENDING', 50)).items.map((x) => x.approvalId);
    expect(listed.sort()).toEqual([pending.approvalId, fresh.approvalId].sort());
    expect(await getApproval(fresh.accountId, fresh.approvalId as string)).toMatchObject({ status: 'PENDING' });
    expect(await getCallback(waiting.accountId, waiting.callbackId as string)).toMatchObject({ status: 'PENDING' });

    const again = await migrate({ ratePerSecond: 1000 });
    expect(Object.values(again.moved).every((n) => n === 0)).toBe(true);
    expect(again.superseded).toBe(0);
  });
});

describe('between the deploy and the migration', () => {
  it('an approval of the old shape is listed, decided, expired, reminded once and cancelled with its run; its item moves when first read', {
    timeout: 120_000,
  }, async () => {
    const a = await givenAccount();
    const decidedRun = await waitingIn(a, gate(), 'WAITING_APPROVAL');
    const expiringRun = await waitingIn(a, gate({ timeoutSeconds: 60 }), 'WAITING_APPROVAL');
    const remindedRun = await waitingIn(a, gate({ remind: { everySeconds: 60, max: 3 } }), 'WAITING_APPROVAL');
    const cancelledRun = await waitingIn(a, gate(), 'WAITING_APPROVAL');
    const [toDecide, expiring, reminded] = [await oldApproval(decidedRun), await oldApproval(expiringRun), await oldApproval(remindedRun)];
    await oldApproval(cancelledRun);

    // Listed from the unsharded listing of before (merged with the shards), oldest first.
    const listed = (await listApprovalsByStatus(a.account.accountId, 'PENDING', 50)).items.map((x) => x.approvalId);
    expect(listed).toEqual([decidedRun, expiringRun, remindedRun, cancelledRun].map((e) => e.approvalId));

    // Decided through the domain (its read moves it first), the run goes on.
    const principal = { kind: 'apiKey', accountId: a.account.accountId, userId: a.admin.userId, keyId: 'k', scopes: [], plan: 'team' };
    const decision = await decide({
      principal: principal as never,
      approvalId: toDecide.approvalId,
      decision: 'approve',
      channel: 'v1',
      sourceIp: '203.0.113.1',
    });
    expect(decision.status).toBe('APPROVED');
    expect(await until(decidedRun, ['SUCCEEDED', 'FAILED'])).toMatchObject({ status: 'SUCCEEDED' });
    expect(await raw({ PK: `ACC#${a.account.accountId}`, SK: `AP#${toDecide.approvalId}` })).toBeUndefined();

    // Expired by the sweep from the unsharded deadline partition, once.
    const past = (expiring.expiresAt as number) + 1;
    expect(await expireDueApprovals(past)).toBe(1);
    expect(await expireDueApprovals(past)).toBe(0);
    expect(await getApproval(a.account.accountId, expiring.approvalId)).toMatchObject({ status: 'EXPIRED' });
    expect(await until(expiringRun, ['FAILED'])).toMatchObject({ status: 'FAILED' });

    // Reminded from the unsharded due partition, once under concurrent sweeps; the next reminder's item is in its shard.
    const due = (reminded.nextRemindAt as number) + 1;
    const sweeps = await Promise.all(Array.from({ length: 3 }, () => nudgeDueApprovals(due)));
    expect(sweeps.reduce((n, r) => n + r.reminders, 0)).toBe(1);
    expect(await getApproval(a.account.accountId, reminded.approvalId)).toMatchObject({ reminders: 1 });
    const next = (await listDueNudges(due + 120_000, 100)).filter((n) => n.approvalId === reminded.approvalId);
    expect(next.map((n) => inShard(n.PK, 'APPROVAL#NUDGE'))).toEqual([true]);

    // Cancelled with its run, never read before: the cancel's first try is refused, the second reads (and moves) it.
    expect((await cancelRun(cancelledRun.accountId, cancelledRun.executionId, 'old shape')).status).toBe('CANCELLED');
    expect(await getApproval(a.account.accountId, cancelledRun.approvalId as string)).toMatchObject({ status: 'CANCELLED' });
  });

  it('a callback of the old shape times out by the sweep, is found by id and cancelled with its run; a schedule indexed the old way is repaired', {
    timeout: 120_000,
  }, async () => {
    const a = await givenAccount({ plan: 'enterprise' });
    const timingOut = await waitingIn(a, { ...wait, timeoutSeconds: 60 }, 'WAITING_CALLBACK');
    const cancelled = await waitingIn(a, wait, 'WAITING_CALLBACK');
    const found = await waitingIn(a, wait, 'WAITING_CALLBACK');
    const old = await oldCallback(timingOut);
    await oldCallback(cancelled);
    await oldCallback(found);

    expect(await expireDueCallbacks(old.deadline + 1)).toBe(1);
    expect(await expireDueCallbacks(old.deadline + 1)).toBe(0);
    expect(await until(timingOut, ['FAILED'])).toMatchObject({ status: 'FAILED' });
    expect(await getCallback(a.account.accountId, old.callbackId)).toMatchObject({ status: 'TIMED_OUT' });

    expect((await cancelRun(cancelled.accountId, cancelled.executionId, 'old shape')).status).toBe('CANCELLED');
    expect(await getCallback(a.account.accountId, cancelled.callbackId as string)).toMatchObject({ status: 'CANCELLED' });

    expect(await getCallback(a.account.accountId, found.callbackId as string)).toMatchObject({ status: 'PENDING' });
    expect(await raw({ PK: `ACC#${a.account.accountId}`, SK: `CB#${found.callbackId}` })).toBeUndefined();
    // Another account's id finds nothing, in either shape.
    expect(await getCallback((await givenAccount()).account.accountId, found.callbackId as string)).toBeUndefined();

    const workflow = await createWorkflow(actor(a), {
      name: 'scheduled',
      definition: WorkflowDefinition.parse({ steps: [{ id: 's', type: 'set', values: { x: 1 } }] }),
      recovery: false,
      editors: [],
    });
    const schedule = await createSchedule(actor(a), workflow.workflowId, CreateScheduleBody.parse({ expression: 'rate(1 hour)' }));
    await oldScheduleIndex(a.account.accountId, schedule.scheduleId);
    await clock().remove(schedule.scheduleId);
    expect(await repairScheduleDrift()).toMatchObject({ created: 1, deleted: 0 });
    expect(await clock().list()).toContain(schedule.scheduleId);
    const inOld = await db().send(
      new QueryCommand({
        TableName: tableName(),
        IndexName: 'GSI2',
        KeyConditionExpression: 'GSI2PK = :pk',
        ExpressionAttributeValues: { ':pk': 'SCHEDULES' },
      }),
    );
    expect(inOld.Items?.map((i) => i.SK)).toContain(`SCH#${schedule.scheduleId}`);
  });
});
