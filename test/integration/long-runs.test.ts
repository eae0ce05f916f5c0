import { beforeAll, describe, expect, it, vi } from 'vitest';
import { TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { db } from '../../shared/clients.ts';
import { listEvents } from '../../shared/db/entities/run-events.ts';
import { type Execution, getExecution } from '../../shared/db/entities/execution.ts';
import { createWorkflow } from '../../shared/domain/workflows.ts';
import { DEFAULT_MAX_STEP_EXECUTIONS, WorkflowDefinition } from '../../shared/engine/definition.ts';
import { PACE, paced } from '../../shared/engine/pace.ts';
import { logger } from '../../shared/logger.ts';
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
/** Deliver every queued message (a hand-off to a fresh invocation) until the queue is empty; how many. */
async function drain() {
  let n = 0;
  for (let messages = await takeRunMessages(); messages.length; messages = await takeRunMessages()) {
    for (const m of messages) {
      n++;
      await deliver(m);
    }
  }
  return n;
}
const read = (e: Execution) => getExecution(e.accountId, e.executionId) as Promise<Execution>;
/** Run a definition to its end, counting the worker invocations it took. */
async function ran(definition: unknown) {
  const { execution, message } = await started(definition);
  await deliver(message);
  const invocations = 1 + (await drain());
  return { done: await read(execution), invocations };
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

describe('the defaults agree (maxItems, maxStepExecutions)', () => {
  it('a for_each of 1,000 items (the default maxItems) with one nested step SUCCEEDS under the default maxStepExecutions', async () => {
    const { done, invocations } = await ran({
      steps: [
        { id: 'first', type: 'set', values: { started: true } },
        { id: 'each', type: 'for_each', items: '{% [1..1000] %}', steps: [{ id: 'keep', type: 'set', values: { last: '{% $item %}' } }] },
        { id: 'after', type: 'set', values: { count: '{% $steps.each.items %}' } },
      ],
    });
    expect(done.status, JSON.stringify(done.error)).toBe('SUCCEEDED');
    expect(done.variables).toMatchObject({ last: 1000, count: 1000 });
    expect(done.executed).toBe(1_003);
    expect(DEFAULT_MAX_STEP_EXECUTIONS).toBeGreaterThanOrEqual(100 + 1_000);
    expect(invocations).toBe(1);
    const events = await allEvents(done);
    expect(events).toHaveLength(1 + 2 + 1 + 2 * 1_000 + 1 + 2 + 1);
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
  }, 120_000);
});

describe('one long run shares the process', () => {
  /** A for_each of 1,000 items with 9 nested set steps: 9,001 step executions, none with I/O. */
  const long = {
    maxStepExecutions: 10_000,
    steps: [
      {
        id: 'each',
        type: 'for_each',
        items: '{% [1..1000] %}',
        steps: Array.from({ length: 9 }, (_, i) => ({ id: `n${i}`, type: 'set', values: { [`v${i}`]: '{% $item %}' } })),
      },
    ],
  };

  it('yields to the event loop while it works, and hands itself on after its share of steps per invocation', async () => {
    const yieldsBefore = paced.yields;
    const { done, invocations } = await ran(long);
    expect(done.status, JSON.stringify(done.error)).toBe('SUCCEEDED');
    expect(done.executed).toBe(9_001);
    // A turn of the event loop at least every 50 steps, and a fresh invocation every 2,000 steps.
    expect(paced.yields - yieldsBefore).toBeGreaterThanOrEqual(Math.floor(9_001 / PACE.stepsPerYield) - invocations);
    expect(invocations).toBe(Math.ceil(9_001 / PACE.stepsPerInvocation));
    const events = await allEvents(done);
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    expect(events.filter((e) => e.type === 'step.succeeded')).toHaveLength(9_001);
  }, 180_000);

  it('a short run of the same worker batch ends while the long one is still at work', async () => {
    const a = await started(long);
    const b = await started({ steps: [{ id: 'one', type: 'set', values: { quick: true } }] });
    const yieldsBefore = paced.yields;
    let yieldsWhenShortEnded = -1;
    let timerFiredAfterYields = -1;
    // As the batch processor runs a batch's records: at once, in one process.
    const longDone = deliver(a.message).then(() => paced.yields - yieldsBefore);
    setTimeout(() => {
      timerFiredAfterYields = paced.yields - yieldsBefore;
    }, 0);
    await deliver(b.message).then(() => {
      yieldsWhenShortEnded = paced.yields - yieldsBefore;
    });
    const yieldsAtLongEnd = await longDone;
    expect((await read(b.execution)).status).toBe('SUCCEEDED');
    // The short run and a timer were served between the long run's turns, not after its invocation.
    expect(yieldsWhenShortEnded).toBeLessThan(yieldsAtLongEnd);
    expect(timerFiredAfterYields).toBeLessThan(yieldsAtLongEnd);
    expect(yieldsAtLongEnd).toBeGreaterThanOrEqual(PACE.stepsPerInvocation / PACE.stepsPerYield - 1);
    await drain();
    expect((await read(a.execution)).status).toBe('SUCCEEDED');
  }, 120_000);
});

describe('a worker error', () => {
  it('is logged with the run before the message goes back to the queue', async () => {
    const { execution, message } = await started({ steps: [{ id: 'one', type: 'set', values: { x: 1 } }] });
    const client = db();
    const original = client.send.bind(client);
    const send = vi.spyOn(client, 'send').mockImplementation(((command: unknown, ...rest: unknown[]) => {
      if (command instanceof TransactWriteCommand) return Promise.reject(Object.assign(new Error('boom'), { name: 'InternalServerError' }));
      return (original as (...a: unknown[]) => unknown)(command, ...rest);
    }) as never);
    const error = vi.spyOn(logger, 'error');
    try {
      await expect(deliver(message)).rejects.toThrow('boom');
      expect(error).toHaveBeenCalledWith(
        'run message failed; it will be redelivered',
        expect.objectContaining({ executionId: execution.executionId }),
      );
    } finally {
      send.mockRestore();
      error.mockRestore();
    }
  });
});
