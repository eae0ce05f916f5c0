import { DeleteCommand, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { handler as decideHandler } from '../../functions/http/approvals/decide.ts';
import { handler as cancelHandler } from '../../functions/http/v1/executions/cancel.ts';
import { db, tableName } from '../../shared/clients.ts';
import { type Execution, executionKey, getExecution, listExecutions } from '../../shared/db/entities/execution.ts';
import { getIdempotencyRecord } from '../../shared/db/entities/idempotency.ts';
import { migrate } from '../../shared/db/migrations/index.ts';
import { createWorkflow } from '../../shared/domain/workflows.ts';
import { WorkflowDefinition } from '../../shared/engine/definition.ts';
import type { RunMessage } from '../../shared/engine/dispatch.ts';
import { sweepRestart } from '../../shared/engine/recovery.ts';
import { startRun } from '../../shared/engine/runs.ts';
import { processRunMessage } from '../../shared/engine/worker.ts';
import { takeRunMessages, useOwnQueues, useOwnTable } from '../support/engine.ts';
import { givenAccount } from '../support/fixtures.ts';
import { apiEvent, invoke } from '../support/http.ts';

// Runs and idempotency keys of the shape before issue 32 (a run under its account's partition,
// `ACC#<account>` / `EX#<id>`; a key `ACC#<account>` / `IDEM#<scope>#<key>`), on a table of their own:
// what is in progress across the deploy goes on before and after `npm run admin -- migrate`, which
// moves them (docs/deploying.md "Upgrading").

let account: Awaited<ReturnType<typeof givenAccount>>;
beforeAll(async () => {
  await useOwnTable();
  await useOwnQueues();
  account = await givenAccount();
});

const actor = () => ({ accountId: account.account.accountId, userId: account.admin.userId, role: 'admin' as const });
const approvalFlow = {
  steps: [
    { id: 'approve', type: 'manual_approval', title: 'Ship?', reviewers: ['role:admin'] },
    { id: 'ship', type: 'set', values: { shipped: true } },
  ],
};
const oneStep = { steps: [{ id: 'only', type: 'set', values: { done: true } }] };
const workflowOf = (definition: unknown) =>
  createWorkflow(actor(), { name: 'migrating', definition: WorkflowDefinition.parse(definition), recovery: false, editors: [] });

const deliver = (m: RunMessage) => processRunMessage(m, { remainingMs: () => 30_000 });
async function drain() {
  for (let messages = await takeRunMessages(); messages.length; messages = await takeRunMessages()) {
    for (const m of messages) await deliver(m);
  }
}
const read = (e: Pick<Execution, 'accountId' | 'executionId'>) => getExecution(e.accountId, e.executionId) as Promise<Execution>;
const item = async (key: { PK: string; SK: string }) => (await db().send(new GetCommand({ TableName: tableName(), Key: key }))).Item;
const oldKey = (e: Pick<Execution, 'accountId' | 'executionId'>) => ({ PK: `ACC#${e.accountId}`, SK: `EX#${e.executionId}` });
/** The active index's shard before: the sum of the id's last four characters' codes, mod 8. */
const oldShard = (id: string) => [...id.slice(-4)].reduce((n, c) => n + c.charCodeAt(0), 0) % 8;

/** The run as the release before kept it: under its account's partition, listed by workflow on GSI1 without a shard, no GSI3. */
async function toOldShape(e: Pick<Execution, 'accountId' | 'executionId'>) {
  const current = (await item(executionKey(e.accountId, e.executionId))) as Record<string, unknown>;
  const { GSI3PK: _pk, GSI3SK: _sk, ...rest } = current;
  const old = {
    ...rest,
    ...oldKey(e),
    // The item repeated its ids then.
    accountId: e.accountId,
    executionId: e.executionId,
    GSI1PK: `ACC#${e.accountId}#WF#${current.workflowId}`,
    ...(current.GSI2PK ? { GSI2PK: String(current.GSI2PK).replace(/#\d+$/, `#${oldShard(e.executionId)}`) } : {}),
  };
  await db().send(new PutCommand({ TableName: tableName(), Item: old }));
  await db().send(new DeleteCommand({ TableName: tableName(), Key: executionKey(e.accountId, e.executionId) }));
}

async function waitingAtApproval() {
  const workflow = await workflowOf(approvalFlow);
  const { execution } = await startRun({ workflow, trigger: 'api', variables: {}, startedBy: account.admin.userId });
  await drain();
  const e = await read(execution);
  expect(e.status).toBe('WAITING_APPROVAL');
  await toOldShape(e);
  return { e, workflow };
}
const key = () => ({ authorization: `Bearer ${account.adminKey.token}` });
const decide = (approvalId: string) =>
  invoke(
    decideHandler,
    apiEvent({ method: 'POST', path: '/api/webhook-trigger/approval', headers: key(), body: { approvalId, decision: 'approve' } }),
  );
const listed = async (accountId: string, workflowId?: string) =>
  (await listExecutions(accountId, workflowId ? { workflowId } : {}, 100)).items.map((x) => x.executionId);

describe('runs in progress across the deploy', () => {
  it('one waiting at an approval is read where it was, and once decided (before the migration) finishes under its new key', async () => {
    const { e, workflow } = await waitingAtApproval();
    // Read: found under the old key (one read more), left there.
    expect(await read(e)).toMatchObject({ executionId: e.executionId, status: 'WAITING_APPROVAL' });
    expect(await item(oldKey(e))).toBeDefined();
    expect((await decide(e.approvalId as string)).status).toBe(200);
    await drain();
    expect(await read(e)).toMatchObject({ status: 'SUCCEEDED', variables: { shipped: true } });
    expect(await item(oldKey(e))).toBeUndefined();
    const moved = await item(executionKey(e.accountId, e.executionId));
    expect(moved).toMatchObject({ GSI3SK: `EX#${e.executionId}` });
    // Its ids are its key's: the item does not repeat them.
    expect(moved).not.toHaveProperty('accountId');
    expect(moved).not.toHaveProperty('executionId');
    expect(await listed(e.accountId, workflow.workflowId)).toEqual([e.executionId]);
  });

  it('one waiting at an approval is moved by the migration with its listings, and once decided finishes', async () => {
    const { e, workflow } = await waitingAtApproval();
    expect(await listed(e.accountId, workflow.workflowId)).toEqual([]);
    const done = await migrate({ ratePerSecond: 1000 });
    expect(done.moved.executions).toBeGreaterThanOrEqual(1);
    expect(await item(oldKey(e))).toBeUndefined();
    expect(await listed(e.accountId, workflow.workflowId)).toEqual([e.executionId]);
    expect(await listed(e.accountId)).toContain(e.executionId);
    expect((await decide(e.approvalId as string)).status).toBe(200);
    await drain();
    expect(await read(e)).toMatchObject({ status: 'SUCCEEDED', variables: { shipped: true } });
  });

  it("a worker holding an old run's message claims and runs it; a cancel and the startup sweep act on old runs", async () => {
    const workflow = await workflowOf(oneStep);
    const start = () => startRun({ workflow, trigger: 'webhook', variables: {}, webhookId: 'wh_x', extra: { authMode: 'open' } });
    const { execution: held } = await start();
    const [message] = await takeRunMessages(1);
    await toOldShape(held);
    await deliver(message as RunMessage);
    expect(await read(held)).toMatchObject({ status: 'SUCCEEDED', variables: { done: true } });
    expect(await item(oldKey(held))).toBeUndefined();

    const { execution: cancelled } = await start();
    const { execution: swept } = await start();
    await takeRunMessages(2);
    await toOldShape(cancelled);
    await toOldShape(swept);
    const res = await invoke(
      cancelHandler,
      apiEvent({
        method: 'POST',
        path: `/api/v1/executions/${cancelled.executionId}/cancel`,
        params: { executionId: cancelled.executionId },
        headers: key(),
      }),
    );
    expect(res.status).toBe(200);
    expect(await read(cancelled)).toMatchObject({ status: 'CANCELLED' });
    await sweepRestart({ rule: 'all' });
    expect(await read(swept)).toMatchObject({ status: 'INTERRUPTED', interruptReason: 'restart' });
    expect(await item(oldKey(swept))).toBeUndefined();
  });
});

describe('npm run admin -- migrate: runs and idempotency keys', () => {
  it('moves finished runs with their listings and the keys in force (expired ones left to TTL): dry run, idempotent', async () => {
    const workflow = await workflowOf(oneStep);
    const runs: Execution[] = [];
    for (let i = 0; i < 5; i++) {
      const { execution } = await startRun({ workflow, trigger: 'api', variables: {}, startedBy: account.admin.userId });
      runs.push(execution);
    }
    await drain();
    for (const r of runs) await toOldShape(r);
    const accountId = account.account.accountId;
    const now = Math.floor(Date.now() / 1000);
    const idem = (scope: string, k: string, ttl: number) => ({
      PK: `ACC#${accountId}`,
      SK: `IDEM#${scope}#${k}`,
      type: 'idempotency',
      executionId: runs[0]?.executionId,
      requestHash: 'h',
      createdAt: Date.now(),
      ttl,
    });
    await db().send(new PutCommand({ TableName: tableName(), Item: idem('WH#wh_a', 'key-1', now + 3600) }));
    await db().send(new PutCommand({ TableName: tableName(), Item: idem('WH#wh_a', 'gone', now - 10) }));
    expect(await getIdempotencyRecord(accountId, 'WH#wh_a', 'key-1')).toBeUndefined();

    const dry = await migrate({ ratePerSecond: 1000, dryRun: true });
    expect(dry.moved).toMatchObject({ executions: 5, 'idempotency keys': 1 });
    expect(await item(oldKey(runs[0] as Execution))).toBeDefined();

    const done = await migrate({ ratePerSecond: 1000 });
    expect(done.moved).toMatchObject({ executions: 5, 'idempotency keys': 1 });
    for (const r of runs) {
      expect(await item(oldKey(r))).toBeUndefined();
      expect(await read(r)).toMatchObject({ status: 'SUCCEEDED' });
    }
    const ids = runs.map((r) => r.executionId).reverse();
    expect(await listed(accountId, workflow.workflowId)).toEqual(ids);
    expect((await listed(accountId)).slice(0, 5)).toEqual(ids);
    expect(await getIdempotencyRecord(accountId, 'WH#wh_a', 'key-1')).toMatchObject({ executionId: runs[0]?.executionId });
    expect(await item({ PK: `ACC#${accountId}`, SK: 'IDEM#WH#wh_a#gone' })).toBeDefined();

    const again = await migrate({ ratePerSecond: 1000 });
    expect(again.moved).toMatchObject({ deliveries: 0, executions: 0, 'idempotency keys': 0 });
  });
});
