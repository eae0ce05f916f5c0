import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { db, tableName } from '../../shared/clients.ts';
import { config } from '../../shared/config.ts';
import { executionKey } from '../../shared/db/entities/execution.ts';
import { runPartition } from '../../shared/db/entities/run-events.ts';
import { runRetentionDays } from '../../shared/db/retention.ts';
import { createWorkflow } from '../../shared/domain/workflows.ts';
import { WorkflowDefinition } from '../../shared/engine/definition.ts';
import { startRun } from '../../shared/engine/runs.ts';
import { processRunMessage } from '../../shared/engine/worker.ts';
import { takeRunMessages, useOwnQueues } from '../support/engine.ts';
import { givenAccount } from '../support/fixtures.ts';

// Issue 42, item 5 (a cut): a run's retention by its outcome. A webhook run that SUCCEEDED is kept
// SUCCEEDED_WEBHOOK_RETENTION_DAYS (30 by default) from its end, with the events written at its end;
// a failed one, and a run started otherwise, RETENTION_DAYS (90). The TTL is set when the run ends.

beforeAll(() => useOwnQueues());

const DAY_S = 86_400;
const ok = { steps: [{ id: 'mark', type: 'set', values: { done: true } }] };
const failing = { steps: [{ id: 'stop', type: 'fail', message: 'no' }] };

async function ran(definition: object, trigger: 'webhook' | 'api') {
  const a = await givenAccount();
  const actor = { kind: 'session', accountId: a.account.accountId, userId: a.admin.userId, role: 'admin', sessionId: '' } as const;
  const workflow = await createWorkflow(actor, {
    name: 'kept',
    definition: WorkflowDefinition.parse(definition),
    recovery: false,
    editors: [],
  });
  const { execution } = await startRun({
    workflow: trigger === 'webhook' ? { accountId: workflow.accountId, workflowId: workflow.workflowId } : workflow,
    trigger,
    variables: {},
    ...(trigger === 'webhook' ? { webhookId: 'wh_retention' } : { startedBy: a.admin.userId }),
  } as never);
  for (let i = 0; i < 10; i++) {
    const mine = (await takeRunMessages()).filter((m) => m.executionId === execution.executionId);
    for (const m of mine) await processRunMessage(m, { remainingMs: () => 60_000 });
    if (mine.length) break;
  }
  const { Item: run } = await db().send(
    new GetCommand({ TableName: tableName(), Key: executionKey(execution.accountId, execution.executionId), ConsistentRead: true }),
  );
  const { Items: events = [] } = await db().send(
    new QueryCommand({
      TableName: tableName(),
      KeyConditionExpression: 'PK = :pk AND begins_with(SK, :ev)',
      ExpressionAttributeValues: { ':pk': runPartition(execution.accountId, execution.executionId), ':ev': 'EV#' },
      ConsistentRead: true,
    }),
  );
  const finished = Math.floor(Number(run?.finishedAt) / 1000);
  const kept = (ttl: unknown) => Math.round((Number(ttl) - finished) / DAY_S);
  const types = (i: Record<string, unknown>) => (JSON.parse(String(i.events)) as { type: string }[]).map((e) => e.type);
  const first = events[0] as Record<string, unknown>;
  const last = events.at(-1) as Record<string, unknown>;
  return {
    status: run?.status,
    run: kept(run?.ttl),
    first: { types: types(first), kept: kept(first.ttl) },
    last: { types: types(last), kept: kept(last.ttl) },
  };
}

describe('retention by outcome', () => {
  it('the defaults: a succeeded webhook run 30 days, every other end RETENTION_DAYS (90)', () => {
    expect(config().SUCCEEDED_WEBHOOK_RETENTION_DAYS).toBe(30);
    expect(config().RETENTION_DAYS).toBe(90);
    expect(runRetentionDays({ status: 'SUCCEEDED', trigger: 'webhook' })).toBe(30);
    for (const status of ['FAILED', 'INTERRUPTED', 'CANCELLED']) expect(runRetentionDays({ status, trigger: 'webhook' }), status).toBe(90);
    for (const trigger of ['api', 'schedule', 'rerun']) expect(runRetentionDays({ status: 'SUCCEEDED', trigger }), trigger).toBe(90);
  });

  it('a succeeded webhook run expires 30 days after its end, with the events written at its end; its start event keeps 90 days', async () => {
    const r = await ran(ok, 'webhook');
    expect(r.status).toBe('SUCCEEDED');
    expect(r.run).toBe(30);
    expect(r.last.types).toContain('execution.succeeded');
    expect(r.last.kept).toBe(30);
    // Written at the start, before the outcome was known: the longest retention, from when it was written.
    expect(r.first.types).toEqual(['execution.started']);
    expect(r.first.kept).toBeGreaterThanOrEqual(89);
  });

  it('a failed webhook run keeps RETENTION_DAYS, and so does a succeeded run started by the API', async () => {
    const failed = await ran(failing, 'webhook');
    expect(failed.status).toBe('FAILED');
    expect([failed.run, failed.last.kept]).toEqual([90, 90]);
    const api = await ran(ok, 'api');
    expect(api.status).toBe('SUCCEEDED');
    expect([api.run, api.last.kept]).toEqual([90, 90]);
  });
});
