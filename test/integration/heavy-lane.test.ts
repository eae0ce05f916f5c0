import { GetQueueAttributesCommand, SendMessageCommand, type SendMessageCommandInput } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { grantsOfWorker } from '../../infra/iam.ts';
import { identityOf, runAs } from '../../infra/local/iam.ts';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { db, queue, tableName } from '../../shared/clients.ts';
import { config, resetConfig } from '../../shared/config.ts';
import { type Execution, getExecution } from '../../shared/db/entities/execution.ts';
import { counterKey, RATE_WINDOW_SECONDS } from '../../shared/db/entities/rate-counters.ts';
import { takeAccountBudget } from '../../shared/domain/rate-limit.ts';
import { startTriggeredRun } from '../../shared/domain/trigger.ts';
import { runsQueueBacklog, sendRunMessage } from '../../shared/engine/dispatch.ts';
import { eventually, startWorkers, takeRunMessages, useOwnQueues } from '../support/engine.ts';
import { givenKeyHooks } from '../support/key-hooks.ts';

// The heavy lane (shared/engine/lanes.ts, docs/architecture.md "Fair tenants"): an account whose requests
// in the current rate window exceed HEAVY_ACCOUNT_REQUESTS_PER_MINUTE has its new webhook runs' messages
// sent to the heavy lane's queue, which the runs worker consumes through an event source of its own.
// On this file's own queues (both lanes), with a threshold of 5 requests a minute (the setting's default,
// 250, is the unit test's) so that an account is heavy after a few triggers.

const THRESHOLD = 5;
/** Every run message sent: the queue it went to (`main` or `heavy`) and its body. */
const sent: { lane: 'main' | 'heavy'; body: { executionId: string; lane?: string } }[] = [];
const MIDDLEWARE = 'test-record-run-lanes';

beforeAll(async () => {
  await useOwnQueues({ INLINE_RUNS: 'off', HEAVY_ACCOUNT_REQUESTS_PER_MINUTE: String(THRESHOLD) });
  const { RUNS_QUEUE_URL, HEAVY_RUNS_QUEUE_URL } = config();
  expect(HEAVY_RUNS_QUEUE_URL).toBeDefined();
  queue().middlewareStack.add(
    (next, context) => async (args) => {
      const out = await next(args);
      if (context.commandName === 'SendMessageCommand') {
        const input = args.input as SendMessageCommandInput;
        const lane = input.QueueUrl === RUNS_QUEUE_URL ? 'main' : input.QueueUrl === HEAVY_RUNS_QUEUE_URL ? 'heavy' : undefined;
        if (lane) sent.push({ lane, body: JSON.parse(input.MessageBody ?? '{}') });
      }
      return out;
    },
    { step: 'initialize', name: MIDDLEWARE },
  );
});
afterAll(() => {
  queue().middlewareStack.remove(MIDDLEWARE);
  resetConfig();
});

/** The lanes the messages of a run went to, in order. */
const lanesOf = (executionId: string) => sent.filter((s) => s.body.executionId === executionId).map((s) => s.lane);

/** An account with a key-bound webhook starting `steps`, and its trigger (as the trigger's function: its grants apply). */
async function givenHook(steps: unknown[], plan: 'team' | 'enterprise' = 'team') {
  const { a, hook } = await givenKeyHooks(plan);
  const { webhook, trigger } = await hook({ steps });
  const read = (id: string) => getExecution(a.account.accountId, id) as Promise<Execution>;
  return { accountId: a.account.accountId, webhook, trigger: async () => (await trigger({ n: 1 })).executionId, read };
}
const SET = [{ id: 'mark', type: 'set', values: { ok: true } }];

const WINDOW_MS = RATE_WINDOW_SECONDS * 1000;
/** Wait, if need be, for a rate window with at least 10 s left: an account's count must not start again part-way through a test. */
async function roomInWindow() {
  const left = WINDOW_MS - (Date.now() % WINDOW_MS);
  if (left < 10_000) await new Promise((r) => setTimeout(r, left + 100));
}

describe('the heavy lane', () => {
  it("sends an account's runs to the main lane up to the threshold and to the heavy lane above it; both lanes run them", {
    timeout: 60_000,
  }, async () => {
    const stop = startWorkers();
    try {
      const heavy = await givenHook(SET);
      const light = await givenHook(SET);
      await roomInWindow();
      const heavyIds: string[] = [];
      for (let i = 0; i < THRESHOLD + 3; i++) heavyIds.push(await heavy.trigger());
      const lightIds = [await light.trigger(), await light.trigger(), await light.trigger()];
      // The first THRESHOLD requests of the window on the main lane, every one after it on the heavy lane, with its lane in the body.
      expect(heavyIds.map((id) => lanesOf(id)[0])).toEqual([...Array(THRESHOLD).fill('main'), 'heavy', 'heavy', 'heavy']);
      expect(heavyIds.map((id) => sent.find((s) => s.body.executionId === id)?.body.lane)).toEqual([
        ...Array(THRESHOLD).fill(undefined),
        'heavy',
        'heavy',
        'heavy',
      ]);
      // An account under the threshold stays on the main lane.
      expect(lightIds.map((id) => lanesOf(id))).toEqual([['main'], ['main'], ['main']]);
      // The runs worker takes both lanes: every run ends SUCCEEDED.
      for (const id of heavyIds)
        await eventually(
          () => heavy.read(id),
          (e) => e?.status === 'SUCCEEDED',
        );
      for (const id of lightIds)
        await eventually(
          () => light.read(id),
          (e) => e?.status === 'SUCCEEDED',
        );
    } finally {
      await stop();
    }
  });

  it("keeps a heavy run's lane when the worker sends its run again (a delay's wake)", { timeout: 60_000 }, async () => {
    const stop = startWorkers();
    try {
      const h = await givenHook([
        { id: 'wait', type: 'delay', seconds: 1 },
        { id: 'mark', type: 'set', values: { ok: true } },
      ]);
      await roomInWindow();
      const ids: string[] = [];
      for (let i = 0; i < THRESHOLD + 1; i++) ids.push(await h.trigger());
      for (const id of ids)
        await eventually(
          () => h.read(id),
          (e) => e?.status === 'SUCCEEDED',
        );
      // Each run's two messages (its start, its wake after the delay) went to the same lane: the main
      // lane's runs stay there, the heavy one's wake goes back to the heavy lane.
      expect(ids.map(lanesOf)).toEqual([...Array(THRESHOLD).fill(['main', 'main']), ['heavy', 'heavy']]);
      const last = ids.at(-1) as string;
      expect(sent.filter((s) => s.body.executionId === last).map((s) => s.body.lane)).toEqual(['heavy', 'heavy']);
    } finally {
      await stop();
    }
  });

  it('keeps an account seen heavy on the heavy lane through the next rate window, then lets it go', async () => {
    const h = await givenHook(SET);
    await roomInWindow();
    // Heavy in this window, by its triggers.
    for (let i = 0; i < THRESHOLD + 1; i++) await h.trigger();
    const lastId = sent.at(-1)?.body.executionId as string;
    expect(lanesOf(lastId)).toEqual(['heavy']);
    // The next window: its count starts again at 1 (the trigger's path with that window's clock), and
    // the run still goes to the heavy lane; two windows on, the main lane.
    const window = WINDOW_MS;
    const next = (Math.floor(Date.now() / window) + 1) * window + 1_000;
    const start = async (now: number) => {
      const { used } = await takeAccountBudget(h.accountId, now);
      const { result } = await startTriggeredRun({ webhook: h.webhook, sourceIp: '203.0.113.7', payload: {}, accountRequests: used }, now);
      return { used, lanes: lanesOf(result.executionId) };
    };
    expect(await start(next)).toEqual({ used: 1, lanes: ['heavy'] });
    expect(await start(next + window)).toEqual({ used: 1, lanes: ['main'] });
    // These runs are dated in the next minutes: off the queues, no worker takes them.
    await takeRunMessages(10, 'heavy');
    await takeRunMessages(10);
  });

  it("counts an account's requests above one counter as the count on one times the counters (the account item's as itself)", async () => {
    process.env.RATE_LIMITS = JSON.stringify({ enterprise: 120_000 });
    resetConfig();
    try {
      // 120,000 a minute: 4 counters, the account item (counter 0) and RATE#<account>#1..3, taken in turn.
      const h = await givenHook(SET, 'enterprise');
      await roomInWindow();
      const used: number[] = [];
      for (let i = 0; i < 12; i++) used.push((await takeAccountBudget(h.accountId)).used);
      const counts = await Promise.all(
        [0, 1, 2, 3].map(async (i) =>
          Number(
            (await db().send(new GetCommand({ TableName: tableName(), Key: counterKey(h.accountId, i), ConsistentRead: true }))).Item
              ?.rateCount ?? 0,
          ),
        ),
      );
      expect(counts.reduce((a, b) => a + b, 0)).toBe(12);
      // The first request of this instance went to the account item (it did not know the layout yet): 1.
      expect(used[0]).toBe(1);
      // The others: each the count on its counter, times 4 on counters 1..3 (a multiple of 4 from 4 up), as
      // itself on the account item; the last request on each counter 1..3 estimates 4 × its count.
      for (const u of used.slice(1)) expect(u % 4 === 0 || u <= counts[0]!).toBe(true);
      for (const i of [1, 2, 3]) expect(used).toContain(4 * counts[i]!);
    } finally {
      delete process.env.RATE_LIMITS;
      resetConfig();
    }
  });
});

describe("the heavy lane's queue", () => {
  it('is sent to only by functions granted queue:send, as on AWS (local IAM)', async () => {
    const m = { accountId: 'acc_lane', executionId: 'ex_lane', dispatch: 'd', lane: 'heavy' as const };
    const refused = await runAs(identityOf('test-fn', ['queue:requeue']), () => sendRunMessage(m)).catch((e: unknown) => e as Error);
    expect(refused).toMatchObject({ name: 'AccessDeniedException' });
    expect((refused as Error).message).toContain(`sqs:SendMessage on resource: arn:aws:sqs:`);
    expect((refused as Error).message).toContain(config().HEAVY_RUNS_QUEUE_URL?.split('/').pop());
    await runAs(identityOf('worker-execute', grantsOfWorker('worker/execute')), () => sendRunMessage(m));
    expect((await takeRunMessages(10, 'heavy')).map((x) => x.executionId)).toContain('ex_lane');
  });

  it("counts in the startup sweep's backlog, read with its grants", async () => {
    const asSweep = () => runAs(identityOf('sweep-startup', grantsOfWorker('sweep/startup')), runsQueueBacklog);
    const depth = async (url: string) => {
      const { Attributes = {} } = await queue().send(
        new GetQueueAttributesCommand({
          QueueUrl: url,
          AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible', 'ApproximateNumberOfMessagesDelayed'],
        }),
      );
      return Object.values(Attributes).reduce((n, v) => n + Number(v), 0);
    };
    const { RUNS_QUEUE_URL, HEAVY_RUNS_QUEUE_URL } = config();
    const both = async () => (await depth(RUNS_QUEUE_URL)) + (await depth(HEAVY_RUNS_QUEUE_URL as string));
    const before = await asSweep();
    expect(before).toBe(await both());
    // One more message on the heavy lane alone (delayed: no test takes it): the backlog grows with it.
    await queue().send(new SendMessageCommand({ QueueUrl: HEAVY_RUNS_QUEUE_URL, MessageBody: '{}', DelaySeconds: 900 }));
    const after = await asSweep();
    expect(after).toBeGreaterThan(before);
    expect(after).toBe(await both());
  });

  it('is not used when the stack has none (HEAVY_RUNS_QUEUE_URL unset): a heavy message goes to the runs queue', async () => {
    const heavyQueue = process.env.HEAVY_RUNS_QUEUE_URL;
    delete process.env.HEAVY_RUNS_QUEUE_URL;
    resetConfig();
    try {
      await sendRunMessage({ accountId: 'acc_lane', executionId: 'ex_no_lane', dispatch: 'd', lane: 'heavy' });
      expect(sent.at(-1)).toMatchObject({ lane: 'main', body: { executionId: 'ex_no_lane', lane: 'heavy' } });
      expect((await takeRunMessages(10)).map((x) => x.executionId)).toContain('ex_no_lane');
    } finally {
      process.env.HEAVY_RUNS_QUEUE_URL = heavyQueue;
      resetConfig();
    }
  });
});
