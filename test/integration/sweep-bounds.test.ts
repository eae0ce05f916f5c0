import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resetConfig } from '../../shared/config.ts';
import { getApproval } from '../../shared/db/entities/approval.ts';
import { type Execution, getExecution } from '../../shared/db/entities/execution.ts';
import { nudgeDueApprovals } from '../../shared/domain/nudges.ts';
import { createWorkflow } from '../../shared/domain/workflows.ts';
import { WorkflowDefinition } from '../../shared/engine/definition.ts';
import { startRun } from '../../shared/engine/runs.ts';
import { eventually, startWorkers, useOwnQueues, useOwnTable } from '../support/engine.ts';
import { givenAccount } from '../support/fixtures.ts';

// The scheduled sweep's reminders a pass (SWEEP_REMINDERS_PER_PASS, docs/configuration.md) and its
// time bound, on a table of its own (the sweep reads every due reminder of the table).

let stopWorkers: () => Promise<unknown>;
beforeAll(async () => {
  await useOwnTable();
  await useOwnQueues();
  stopWorkers = startWorkers();
  process.env.SWEEP_REMINDERS_PER_PASS = '25';
  resetConfig();
});
afterAll(async () => {
  await stopWorkers?.();
  delete process.env.SWEEP_REMINDERS_PER_PASS;
  resetConfig();
});

describe('the sweep pass bounds', () => {
  it('sends at most SWEEP_REMINDERS_PER_PASS reminders a pass, over every shard, the rest in the next; none once its time is up', {
    timeout: 120_000,
  }, async () => {
    const a = await givenAccount();
    const actor = { kind: 'session', accountId: a.account.accountId, userId: a.admin.userId, role: 'admin', sessionId: 's' } as const;
    const definition = WorkflowDefinition.parse({
      steps: [{ id: 'gate', type: 'manual_approval', title: 'Ship?', reviewers: ['role:admin'], remind: { everySeconds: 3600, max: 2 } }],
    });
    const workflow = await createWorkflow(actor, { name: 'reminded', definition, recovery: false, editors: [] });
    const runs = await Promise.all(
      Array.from(
        { length: 30 },
        async () => (await startRun({ workflow, trigger: 'api', variables: {}, startedBy: a.admin.userId })).execution,
      ),
    );
    const waiting = await Promise.all(
      runs.map((e) =>
        eventually(
          () => getExecution(e.accountId, e.executionId) as Promise<Execution>,
          (x) => x.status === 'WAITING_APPROVAL',
          60_000,
        ),
      ),
    );
    const due = Date.now() + 3601_000;

    expect(await nudgeDueApprovals(due, Date.now() - 1)).toMatchObject({ reminders: 0 });
    expect(await nudgeDueApprovals(due)).toMatchObject({ reminders: 25 });
    expect(await nudgeDueApprovals(due)).toMatchObject({ reminders: 5 });
    expect(await nudgeDueApprovals(due)).toMatchObject({ reminders: 0 });
    const approvals = await Promise.all(waiting.map((e) => getApproval(e.accountId, e.approvalId as string)));
    expect(approvals.map((x) => x?.reminders)).toEqual(Array(30).fill(1));
  });
});
