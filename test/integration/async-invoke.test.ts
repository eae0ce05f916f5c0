import { randomBytes } from 'node:crypto';
import { CreateQueueCommand, DeleteQueueCommand, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handler as executionsHandler } from '../../functions/http/v1/executions/list.ts';
import { handler as fireHandler } from '../../functions/schedule/fire.ts';
import { type AsyncFunctionSettings, invokeAsync, type OnFailureRecord, retryDelaysMs } from '../../infra/local/async-invoke.ts';
import type { Invocation } from '../../infra/local/lambda.ts';
import { startLocalScheduler } from '../../infra/local/scheduler.ts';
import { db, queue, tableName } from '../../shared/clients.ts';
import { config, resetConfig } from '../../shared/config.ts';
import { getExecution } from '../../shared/db/entities/execution.ts';
import { getSchedule, scheduleKey } from '../../shared/db/entities/schedule.ts';
import { createSchedule } from '../../shared/domain/schedules.ts';
import { createWorkflow } from '../../shared/domain/workflows.ts';
import { WorkflowDefinition } from '../../shared/engine/definition.ts';
import { type FireEvent, localClock } from '../../shared/schedules/clock.ts';
import { CreateScheduleBody } from '../../shared/schemas/schedules.ts';
import { eventually, takeRunMessages, useOwnQueues, useOwnTable } from '../support/engine.ts';
import { adminSession, givenAccount } from '../support/fixtures.ts';
import { apiEvent, bearer, invoke } from '../support/http.ts';

/**
 * Lambda's asynchronous invocations as the local stack makes them (infra/local/async-invoke.ts): the
 * invoker's retries and its on-failure record on this file's own async-failures queue (real local
 * SQS), then the local scheduler firing real schedules through it, with faults of the storage the fire
 * really reads: a schedule item this release cannot read (as one written by a newer release before a
 * rollback), and a runs queue that refuses the run's message. The file has a table of its own: the
 * local scheduler fires every timer of this process's clock.
 */

beforeAll(async () => {
  await useOwnTable();
  await useOwnQueues();
});

/** The records on this file's on-failure queue, taken off it (waits up to `waitSeconds` for the first). */
async function takeRecords(waitSeconds = 1): Promise<OnFailureRecord[]> {
  const { Messages = [] } = await queue().send(
    new ReceiveMessageCommand({
      QueueUrl: process.env.ASYNC_FAILURES_QUEUE_URL,
      MaxNumberOfMessages: 10,
      WaitTimeSeconds: waitSeconds,
      VisibilityTimeout: 300,
    }),
  );
  return Messages.map((m) => JSON.parse(m.Body ?? '') as OnFailureRecord);
}

const SWEEP: AsyncFunctionSettings = { name: 'sweep-scheduled', timeoutSeconds: 5, config: 'sweep/scheduled' };

describe('the local async invoker', () => {
  it("retries a failing function twice after its waits, under one request id, then sends Lambda's on-failure record", async () => {
    const tries: { at: number; requestId: string }[] = [];
    const failing = async (_event: unknown, context: Context) => {
      tries.push({ at: Date.now(), requestId: context.awsRequestId });
      throw new TypeError(`boom ${tries.length}`);
    };
    const event = { source: 'aws.events', time: new Date().toISOString() };
    const outcome = await invokeAsync(SWEEP, failing, event, { retryDelaysMs: [200, 400] });
    expect(tries).toHaveLength(3);
    expect(tries[1]!.at - tries[0]!.at).toBeGreaterThanOrEqual(200);
    expect(tries[2]!.at - tries[1]!.at).toBeGreaterThanOrEqual(400);
    expect(new Set(tries.map((t) => t.requestId)).size).toBe(1);
    expect(outcome.status).toBe('failed');
    const [record, ...more] = await takeRecords();
    expect(more).toEqual([]);
    expect(record).toEqual(outcome.status === 'failed' ? outcome.record : undefined);
    expect(record).toMatchObject({
      version: '1.0',
      requestContext: {
        requestId: tries[0]!.requestId,
        functionArn: 'arn:aws:lambda:local:000000000000:function:sweep-scheduled:$LATEST',
        condition: 'RetriesExhausted',
        approximateInvokeCount: 3,
      },
      requestPayload: event,
      responseContext: { statusCode: 200, executedVersion: '$LATEST', functionError: 'Unhandled' },
      responsePayload: { errorType: 'TypeError', errorMessage: 'boom 3' },
    });
    expect(Date.parse(record!.timestamp)).toBeGreaterThanOrEqual(tries[2]!.at);
  });

  it("counts a try cut off at the function's timeout as failed (Sandbox.Timedout)", async () => {
    const outcome = await invokeAsync(
      { ...SWEEP, timeoutSeconds: 0.05 },
      () => new Promise((resolve) => setTimeout(resolve, 1000)),
      {},
      { retryDelaysMs: [10, 20] },
    );
    expect(outcome).toMatchObject({ status: 'failed', attempts: 3 });
    const [record] = await takeRecords();
    expect(record?.responsePayload).toEqual({
      errorType: 'Sandbox.Timedout',
      errorMessage: `RequestId: ${record?.requestContext.requestId} Error: Task timed out after 0.05 seconds`,
    });
  });

  it('sends nothing when a retry succeeds', async () => {
    let tries = 0;
    const outcome = await invokeAsync(
      SWEEP,
      async () => {
        if (++tries === 1) throw new Error('once');
        return { swept: true };
      },
      {},
      { retryDelaysMs: [10, 20] },
    );
    expect(outcome).toEqual({ status: 'ok', attempts: 2, result: { swept: true } });
    expect(await takeRecords(1)).toEqual([]);
  });

  it('gives up at once when the next retry would come past the maximum event age (10 minutes for a sweep tick)', async () => {
    let tries = 0;
    const failing = async () => {
      tries++;
      throw new Error('down');
    };
    const outcome = await invokeAsync(SWEEP, failing, {}, { retryDelaysMs: [601_000, 1000] });
    expect(tries).toBe(1);
    const [record] = await takeRecords();
    expect(record?.requestContext).toMatchObject({ condition: 'EventAgeExceeded', approximateInvokeCount: 1 });
    expect(outcome.status).toBe('failed');
  });

  it('drops the retries still waiting when the local stack stops: no record', async () => {
    const stop = new AbortController();
    const outcome = await invokeAsync(
      SWEEP,
      async () => {
        throw new Error('down');
      },
      {},
      { retryDelaysMs: [60_000, 120_000], signal: stop.signal, onAttempt: () => stop.abort() },
    );
    expect(outcome).toEqual({ status: 'cancelled', attempts: 1 });
    expect(await takeRecords(1)).toEqual([]);
  });

  it("waits AWS's 1 and 2 minutes unless LOCAL_ASYNC_RETRY_SECONDS says how long the first wait is", () => {
    expect(retryDelaysMs({})).toEqual([60_000, 120_000]);
    expect(retryDelaysMs({ LOCAL_ASYNC_RETRY_SECONDS: '0.5' })).toEqual([500, 1000]);
    expect(() => retryDelaysMs({ LOCAL_ASYNC_RETRY_SECONDS: 'soon' })).toThrow(/LOCAL_ASYNC_RETRY_SECONDS/);
  });
});

const DEFINITION = WorkflowDefinition.parse({ steps: [{ id: 'greet', type: 'set', values: { greeting: 'hello' } }] });

async function givenWorkflow() {
  const a = await givenAccount({ plan: 'pro' });
  const workflow = await createWorkflow(a.admin, {
    name: `wf-${randomBytes(3).toString('hex')}`,
    definition: DEFINITION,
    recovery: false,
    editors: [],
  });
  return { ...a, workflow };
}

const runsOf = async (key: string, workflowId: string) =>
  (
    await invoke(
      executionsHandler,
      apiEvent({ path: '/api/v1/executions', headers: bearer(key), query: { workflowId, trigger: 'schedule' } }),
    )
  ).json.items as { executionId: string; status: string; scheduledAt: number }[];

/** The schedule item as a newer release might write it: an overlap mode this one does not know, so reading it throws. */
const setOverlap = (accountId: string, scheduleId: string, overlap: string) =>
  db().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: scheduleKey(accountId, scheduleId),
      UpdateExpression: 'SET overlap = :o',
      ExpressionAttributeValues: { ':o': overlap },
    }),
  );

describe('schedule fires through the local scheduler, invoked asynchronously', () => {
  type Try = { fire: FireEvent; attempt: number; outcome: Invocation<unknown>; at: number };
  const tries: Try[] = [];
  /** What a test does when a try of one of its fires ends (before any retry). */
  const onTry = new Map<string, (t: Try) => Promise<void>>();
  let scheduler: Awaited<ReturnType<typeof startLocalScheduler>>;
  beforeAll(async () => {
    scheduler = await startLocalScheduler({
      retryDelaysMs: [300, 600],
      onAttempt: async (fire, attempt, outcome) => {
        const t = { fire, attempt, outcome, at: Date.now() };
        tries.push(t);
        await onTry.get(fire.scheduleId)?.(t);
      },
    });
  });
  afterAll(() => scheduler?.stop());
  const triesOf = (scheduleId: string) => tries.filter((t) => t.fire.scheduleId === scheduleId);

  /** An at() schedule due in about two seconds (whole seconds, as at() takes them). */
  async function givenAtSchedule(t: Awaited<ReturnType<typeof givenWorkflow>>) {
    const due = Math.ceil((Date.now() + 2500) / 1000) * 1000;
    const expression = `at(${new Date(due).toISOString().slice(0, 19)})`;
    const s = await createSchedule(adminSession(t), t.workflow.workflowId, CreateScheduleBody.parse({ expression }));
    return { s, due };
  }

  it('a fire that throws is tried 3 times, then its record is on the on-failure queue; nothing was started', async () => {
    const t = await givenWorkflow();
    const { s, due } = await givenAtSchedule(t);
    await setOverlap(t.account.accountId, s.scheduleId, 'queue');
    const [record] = await eventually(
      () => takeRecords(1),
      (r) => r.length > 0,
    );
    const mine = triesOf(s.scheduleId);
    expect(mine.map((x) => [x.attempt, x.outcome.status])).toEqual([
      [1, 'error'],
      [2, 'error'],
      [3, 'error'],
    ]);
    expect(mine[1]!.at - mine[0]!.at).toBeGreaterThanOrEqual(300);
    expect(mine[2]!.at - mine[1]!.at).toBeGreaterThanOrEqual(600);
    expect(record).toMatchObject({
      requestContext: {
        functionArn: 'arn:aws:lambda:local:000000000000:function:schedule-fire:$LATEST',
        condition: 'RetriesExhausted',
        approximateInvokeCount: 3,
      },
      requestPayload: { accountId: t.account.accountId, scheduleId: s.scheduleId, scheduledTime: new Date(due).toISOString() },
      responseContext: { statusCode: 200, executedVersion: '$LATEST', functionError: 'Unhandled' },
      responsePayload: { errorType: 'ZodError' },
    });
    expect(record?.responsePayload?.errorMessage).toContain('overlap');
    // Readable again: no try got as far as writing anything.
    await setOverlap(t.account.accountId, s.scheduleId, 'skip');
    expect(await getSchedule(t.account.accountId, s.scheduleId)).toMatchObject({ fires: 0, failures: 0, enabled: true });
    expect(await runsOf(t.adminKey.token, t.workflow.workflowId)).toEqual([]);
  });

  it('a fire that fails once, then succeeds on its retry, starts exactly one run and leaves no record', async () => {
    const t = await givenWorkflow();
    const { s, due } = await givenAtSchedule(t);
    await setOverlap(t.account.accountId, s.scheduleId, 'queue');
    // Put right between the first try and the retry (the release rolled forward again).
    onTry.set(s.scheduleId, async (x) => {
      if (x.attempt === 1) await setOverlap(t.account.accountId, s.scheduleId, 'skip');
    });
    const mine = await eventually(
      async () => triesOf(s.scheduleId),
      (xs) => xs.some((x) => x.outcome.status === 'ok'),
    );
    expect(mine.map((x) => [x.attempt, x.outcome.status])).toEqual([
      [1, 'error'],
      [2, 'ok'],
    ]);
    const runs = await runsOf(t.adminKey.token, t.workflow.workflowId);
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ scheduledAt: due });
    expect(await getSchedule(t.account.accountId, s.scheduleId)).toMatchObject({
      fires: 1,
      enabled: false,
      lastExecutionId: runs[0]!.executionId,
    });
    expect(localClock().timers.has(s.scheduleId)).toBe(false);
    expect(await takeRecords(1)).toEqual([]);
  });
});

describe('a fire retried after it wrote its run', () => {
  it('starts no second run when the first try could not queue the run: the retry queues that run', async () => {
    const t = await givenWorkflow();
    const s = await createSchedule(adminSession(t), t.workflow.workflowId, CreateScheduleBody.parse({ expression: 'cron(0 9 * * ? *)' }));
    const scheduledTime = `${new Date().getUTCFullYear() + 1}-01-02T09:00:00.000Z`;
    const runsQueue = config().RUNS_QUEUE_URL as string;
    const queueName = runsQueue.split('/').pop() as string;
    // The runs queue is gone while the first try sends the run's message; it is back before the retry.
    await queue().send(new DeleteQueueCommand({ QueueUrl: runsQueue }));
    const outcome = await invokeAsync(
      { name: 'schedule-fire', timeoutSeconds: 30, config: 'schedule/fire' },
      fireHandler,
      { accountId: t.account.accountId, scheduleId: s.scheduleId, scheduledTime },
      {
        retryDelaysMs: [100, 200],
        onAttempt: async (attempt) => {
          if (attempt !== 1) return;
          const { QueueUrl } = await queue().send(
            new CreateQueueCommand({ QueueName: queueName, Attributes: { VisibilityTimeout: '30' } }),
          );
          process.env.RUNS_QUEUE_URL = QueueUrl;
          resetConfig();
        },
      },
    );
    expect(outcome).toMatchObject({ status: 'ok', attempts: 2, result: { outcome: 'duplicate' } });
    const runs = await runsOf(t.adminKey.token, t.workflow.workflowId);
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ status: 'PENDING', scheduledAt: Date.parse(scheduledTime) });
    expect(await getSchedule(t.account.accountId, s.scheduleId)).toMatchObject({ fires: 1, lastExecutionId: runs[0]!.executionId });
    // The retry sent the message the run waits for: a worker will take it.
    const run = await getExecution(t.account.accountId, runs[0]!.executionId);
    const messages = await takeRunMessages();
    expect(messages.map((m) => [m.executionId, m.dispatch])).toEqual([[run?.executionId, run?.dispatch]]);
    expect(await takeRecords(1)).toEqual([]);
  });
});
