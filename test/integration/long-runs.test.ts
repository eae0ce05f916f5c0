import { beforeAll, describe, expect, it } from 'vitest';
import { listEvents } from '../../shared/db/entities/run-events.ts';
import { type Execution, getExecution } from '../../shared/db/entities/execution.ts';
import { createWorkflow } from '../../shared/domain/workflows.ts';
import { WorkflowDefinition } from '../../shared/engine/definition.ts';
import type { RunMessage } from '../../shared/engine/dispatch.ts';
import { startRun } from '../../shared/engine/runs.ts';
import { processRunMessage } from '../../shared/engine/worker.ts';
import { takeRunMessages, useOwnQueues } from '../support/engine.ts';
import { givenAccount } from '../support/fixtures.ts';

// Runs of many in-memory steps (docs/performance.md "Long runs"): their events are written in
// checkpoints that fit DynamoDB's transaction limits, the worker yields to the event loop while it
// works, and one invocation's in-memory work is bounded.

let account: Awaited<ReturnType<typeof givenAccount>>;
beforeAll(async () => {
  await useOwnQueues();
  account = await givenAccount();
});

const actor = () => ({ accountId: account.account.accountId, userId: account.admin.userId, role: 'admin' as const });

async function started(definition: unknown) {
  const workflow = await createWorkflow(actor(), {
    name: 'long',
    definition: WorkflowDefinition.parse(definition),
    recovery: false,
    editors: [],
  });
  const { execution } = await startRun({ workflow, trigger: 'api', variables: {}, startedBy: account.admin.userId });
  const [message] = await takeRunMessages(1);
  expect(message?.executionId).toBe(execution.executionId);
  return { execution, message: message as RunMessage };
}
const deliver = (m: RunMessage) => processRunMessage(m, { remainingMs: () => 50_000 });
/** Deliver the run's message and every message it causes (a hand-off to a fresh invocation), counting them. */
async function ran(definition: unknown) {
  const { execution, message } = await started(definition);
  let invocations = 1;
  await deliver(message);
  for (let messages = await takeRunMessages(); messages.length; messages = await takeRunMessages()) {
    for (const m of messages) {
      invocations++;
      await deliver(m);
    }
  }
  const done = (await getExecution(execution.accountId, execution.executionId)) as Execution;
  return { done, invocations };
}
const allEvents = async (e: Execution) => (await listEvents(e.accountId, e.executionId, 100_000)).items;

describe('runs of many in-memory steps', () => {
  it('a workflow of 100 set steps (the most a definition holds) SUCCEEDS, with every event in order', async () => {
    const steps = Array.from({ length: 100 }, (_, i) => ({ id: `s${i}`, type: 'set', values: { [`v${i}`]: i } }));
    const { done } = await ran({ steps });
    expect(done.status, JSON.stringify(done.error)).toBe('SUCCEEDED');
    expect(done.variables.v99).toBe(99);
    const events = await allEvents(done);
    // execution.started, two per step, execution.succeeded; numbered 1… without a gap.
    expect(events).toHaveLength(202);
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    expect(events.at(-1)?.type).toBe('execution.succeeded');
    expect(done.seq).toBe(202);
  });
});

describe('loops past 100 step executions', () => {
  const pingPong = (maxStepExecutions: number) => ({
    variables: { n: { type: 'number', default: 0 } },
    maxStepExecutions,
    steps: [
      { id: 'inc', type: 'set', values: { n: '{% $vars.n + 1 %}' }, next: 'again' },
      { id: 'again', type: 'set', values: { looped: true }, next: 'inc' },
    ],
  });

  it('a next loop of 2,000 step executions ends FAILED STEP_LIMIT_EXCEEDED at its limit, with its whole log', async () => {
    const { done } = await ran(pingPong(2_000));
    expect(done.status).toBe('FAILED');
    expect(done.error).toMatchObject({ code: 'STEP_LIMIT_EXCEEDED' });
    expect(done.executed).toBe(2_000);
    expect(done.variables.n).toBe(1_000);
    const events = await allEvents(done);
    expect(events).toHaveLength(1 + 2 * 2_000 + 1);
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    expect(events.at(-1)).toMatchObject({ type: 'execution.failed', data: { error: { code: 'STEP_LIMIT_EXCEEDED' } } });
  }, 120_000);

  it('a next loop that leaves after 1,500 step executions, within its limit of 2,000, SUCCEEDS', async () => {
    const { done } = await ran({
      variables: { n: { type: 'number', default: 0 } },
      maxStepExecutions: 2_000,
      steps: [
        { id: 'inc', type: 'set', values: { n: '{% $vars.n + 1 %}' } },
        { id: 'check', type: 'switch', cases: [{ when: '{% $vars.n < 750 %}', next: 'inc' }], default: '$end' },
      ],
    });
    expect(done.status, JSON.stringify(done.error)).toBe('SUCCEEDED');
    expect(done.executed).toBe(1_500);
    expect(await allEvents(done)).toHaveLength(1 + 2 * 1_500 + 1);
  }, 120_000);
});
