import { randomBytes } from 'node:crypto';
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  type ReceiveMessageCommandInput,
  type ReceiveMessageCommandOutput,
  SendMessageBatchCommand,
  SendMessageCommand,
} from '@aws-sdk/client-sqs';
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { LONG_POLL_SECONDS, startPoller } from '../../infra/local/poller.ts';
import { queue } from '../../shared/clients.ts';
import { eventually } from '../support/engine.ts';

/** A stand-in worker: no function of the stack, so its AWS calls are the test's own. */
const STUB = { name: 'stub-worker', timeoutSeconds: 60 };

// The local poller against the run's local-aws-sqs, each test on a queue of its own, with stand-in
// workers (what is under test is the event source, not a worker). Every receive the poller sends is
// recorded by SDK middleware on the shared client: its parameters and how many messages it returned.

type Receive = { queueUrl: string; max: number; wait: number; got: number };
const receives: Receive[] = [];
/** The queue of every receive sent, when it is sent. */
const sent: string[] = [];
const MIDDLEWARE = 'test-record-receives';

beforeAll(() => {
  queue().middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName === 'ReceiveMessageCommand') sent.push((args.input as ReceiveMessageCommandInput).QueueUrl as string);
      const out = await next(args);
      if (context.commandName === 'ReceiveMessageCommand') {
        const input = args.input as ReceiveMessageCommandInput;
        receives.push({
          queueUrl: input.QueueUrl as string,
          max: input.MaxNumberOfMessages ?? 1,
          wait: input.WaitTimeSeconds ?? 0,
          got: (out.output as ReceiveMessageCommandOutput).Messages?.length ?? 0,
        });
      }
      return out;
    },
    { step: 'initialize', name: MIDDLEWARE },
  );
});
afterAll(() => {
  queue().middlewareStack.remove(MIDDLEWARE);
});

const pollers: { stop: () => Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(pollers.splice(0).map((p) => p.stop()));
  vi.restoreAllMocks();
});

async function givenQueue(visibilityTimeoutSeconds = 30) {
  const { QueueUrl } = await queue().send(
    new CreateQueueCommand({
      QueueName: `poller-${randomBytes(4).toString('hex')}`,
      Attributes: { VisibilityTimeout: String(visibilityTimeoutSeconds) },
    }),
  );
  return QueueUrl as string;
}

/** Messages the queue still holds, visible or in flight (local-aws-sqs counts both in this attribute). */
async function held(queueUrl: string) {
  const { Attributes = {} } = await queue().send(
    new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['ApproximateNumberOfMessages'] }),
  );
  return Number(Attributes.ApproximateNumberOfMessages);
}

/** A worker that acknowledges everything and remembers each batch it was given. */
function recordingWorker() {
  const batches: SQSEvent[] = [];
  const worker = async (event: SQSEvent): Promise<SQSBatchResponse> => {
    batches.push(event);
    return { batchItemFailures: [] };
  };
  return { batches, worker };
}

describe('the local SQS emulator (infra/local/emulator-process.ts)', () => {
  // A receive waiting longer than a test may run would fail these by the test's timeout: the
  // emulator answers a long poll as soon as a message is there, as SQS does.
  const longPoll = (queueUrl: string, abortSignal?: AbortSignal) =>
    queue().send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 20, AttributeNames: ['All'] }), {
      abortSignal,
    });

  it('answers a long poll for up to 10 as soon as one message is there, with that one', async () => {
    const queueUrl = await givenQueue();
    const waiting = longPoll(queueUrl);
    await new Promise((r) => setTimeout(r, 200));
    const { MessageId } = await queue().send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'one' }));
    const { Messages = [] } = await waiting;
    expect(Messages.map((m) => m.MessageId)).toEqual([MessageId]);
  });

  it('answers a long poll at once with the messages that are waiting, up to 10', async () => {
    const queueUrl = await givenQueue();
    await queue().send(
      new SendMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: Array.from({ length: 3 }, (_, i) => ({ Id: String(i), MessageBody: String(i) })),
      }),
    );
    const { Messages = [] } = await longPoll(queueUrl);
    expect(Messages.map((m) => m.Body).sort()).toEqual(['0', '1', '2']);
  });

  it('takes nothing for a long poll whose client hung up: the next receive gets the message, received once', async () => {
    const queueUrl = await givenQueue();
    const abort = new AbortController();
    const abandoned = longPoll(queueUrl, abort.signal).catch((e: Error) => e.name);
    await new Promise((r) => setTimeout(r, 200));
    abort.abort();
    expect(await abandoned).toBe('AbortError');
    await new Promise((r) => setTimeout(r, 200));
    const { MessageId } = await queue().send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'kept' }));
    const { Messages = [] } = await longPoll(queueUrl);
    expect(Messages.map((m) => [m.MessageId, m.Attributes?.ApproximateReceiveCount])).toEqual([[MessageId, '1']]);
  });
});

describe('local poller', () => {
  it('hands a lone message over as soon as it is there: the long poll that was waiting brings it', async () => {
    const queueUrl = await givenQueue();
    const { batches, worker } = recordingWorker();
    pollers.push(startPoller(queueUrl, worker, { fn: STUB }));
    // The poller is waiting on an empty queue first: one long poll (its answer is recorded once it comes).
    await new Promise((r) => setTimeout(r, 200));
    const { MessageId } = await queue().send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: '{"lone":true}' }));
    await eventually(
      async () => batches.length,
      (n) => n >= 1,
    );
    expect(batches[0]?.Records.map((r) => r.messageId)).toEqual([MessageId]);
    // One receive, the long poll that was waiting, brought it: it asked for a batch and did not wait
    // for the batch to fill (the test would have timed out first).
    expect(receives.filter((r) => r.queueUrl === queueUrl)).toEqual([{ queueUrl, max: 10, wait: LONG_POLL_SECONDS, got: 1 }]);
    await eventually(
      () => held(queueUrl),
      (n) => n === 0,
    );
  });

  it('takes the messages that are waiting in batches of up to 10, each long poll answered at once', async () => {
    const queueUrl = await givenQueue();
    const bodies = Array.from({ length: 13 }, (_, i) => `{"n":${i}}`);
    for (const chunk of [bodies.slice(0, 10), bodies.slice(10)]) {
      await queue().send(
        new SendMessageBatchCommand({
          QueueUrl: queueUrl,
          Entries: chunk.map((MessageBody, i) => ({ Id: String(i), MessageBody })),
        }),
      );
    }
    const { batches, worker } = recordingWorker();
    pollers.push(startPoller(queueUrl, worker, { fn: STUB }));
    await eventually(
      async () => batches.flatMap((b) => b.Records).length,
      (n) => n >= 13,
    );
    expect(batches.map((b) => b.Records.length)).toEqual([10, 3]);
    expect(
      batches
        .flatMap((b) => b.Records.map((r) => r.body))
        .slice()
        .sort(),
    ).toEqual(bodies.slice().sort());
    const brought = receives.filter((r) => r.queueUrl === queueUrl && r.got > 0);
    expect(brought).toEqual([
      { queueUrl, max: 10, wait: LONG_POLL_SECONDS, got: 10 },
      { queueUrl, max: 10, wait: LONG_POLL_SECONDS, got: 3 },
    ]);
    // Acknowledged batches are deleted.
    await eventually(
      () => held(queueUrl),
      (n) => n === 0,
    );
  });

  it('abandons a worker that outlives its function timeout and moves on; the batch comes back after the visibility timeout', async () => {
    const errors = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const queueUrl = await givenQueue(1);
    const calls: { messageIds: string[]; receiveCounts: string[]; remainingMs: number; firstStillRunning: boolean }[] = [];
    let firstSettled = false;
    let releaseFirst: () => void = () => undefined;
    const worker = async (event: SQSEvent, context: Context): Promise<SQSBatchResponse> => {
      calls.push({
        messageIds: event.Records.map((r) => r.messageId),
        receiveCounts: event.Records.map((r) => r.attributes.ApproximateReceiveCount),
        remainingMs: context.getRemainingTimeInMillis(),
        firstStillRunning: calls.length > 0 && !firstSettled,
      });
      if (calls.length === 1) {
        // Outlives its timeout: only the test ends it, long after the poller gave up on it.
        await new Promise<void>((resolve) => {
          releaseFirst = resolve;
        });
        firstSettled = true;
      }
      return { batchItemFailures: [] };
    };
    pollers.push(startPoller(queueUrl, worker, { fn: { name: 'slow-worker', timeoutSeconds: 1, grants: [] } }));
    const { MessageId } = await queue().send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: '{"slow":true}' }));
    try {
      await eventually(
        async () => calls.length,
        (n) => n >= 2,
      );
      const [first, second] = calls;
      expect(first).toMatchObject({ messageIds: [MessageId], receiveCounts: ['1'], firstStillRunning: false });
      // The same message again, received a second time, while the first invocation is still running:
      // the poller neither deleted it nor waited for the abandoned invocation.
      expect(second).toMatchObject({ messageIds: [MessageId], receiveCounts: ['2'], firstStillRunning: true });
      // The invocation's remaining time counts down from the function's timeout.
      for (const c of calls) {
        expect(c.remainingMs).toBeGreaterThan(0);
        expect(c.remainingMs).toBeLessThanOrEqual(1_000);
      }
      expect(
        errors.mock.calls.map((c) => String(c[0])).some((line) => /Task timed out after \d+\.\d\d seconds \(slow-worker/.test(line)),
      ).toBe(true);
      // The second invocation succeeded in time: its batch is deleted.
      await eventually(
        () => held(queueUrl),
        (n) => n === 0,
      );
    } finally {
      releaseFirst();
    }
  });

  it('leaves the batch of a worker that threw to come back, and deletes it once a later invocation succeeds', async () => {
    const errors = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const queueUrl = await givenQueue(1);
    const receiveCounts: string[] = [];
    const worker = async (event: SQSEvent): Promise<SQSBatchResponse> => {
      receiveCounts.push(...event.Records.map((r) => r.attributes.ApproximateReceiveCount));
      if (receiveCounts.length === 1) throw new Error('crash');
      return { batchItemFailures: [] };
    };
    pollers.push(startPoller(queueUrl, worker, { fn: { name: 'crashing-worker', timeoutSeconds: 5, grants: [] } }));
    await queue().send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: '{}' }));
    await eventually(
      async () => receiveCounts.length,
      (n) => n >= 2,
    );
    expect(receiveCounts.slice(0, 2)).toEqual(['1', '2']);
    expect(errors.mock.calls.some((c) => String(c[0]).includes('crashing-worker threw'))).toBe(true);
    await eventually(
      () => held(queueUrl),
      (n) => n === 0,
    );
  });
  it('with concurrency, a batch still at work does not hold the next one back (as the event source runs several invocations)', async () => {
    const queueUrl = await givenQueue();
    let release: () => void = () => undefined;
    const held = new Promise<void>((r) => {
      release = r;
    });
    const seen: string[] = [];
    const worker = async (event: SQSEvent): Promise<SQSBatchResponse> => {
      const bodies = event.Records.map((r) => r.body);
      seen.push(...bodies);
      if (bodies.includes('first')) await held;
      return { batchItemFailures: [] };
    };
    pollers.push(startPoller(queueUrl, worker, { fn: STUB, concurrency: 2 }));
    try {
      await queue().send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'first' }));
      await eventually(
        async () => seen.length,
        (n) => n === 1,
      );
      await queue().send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'second' }));
      // The second message is handed over while the first invocation is still at work.
      await eventually(
        async () => [...seen],
        (s) => s.includes('second'),
      );
      expect(seen).toEqual(['first', 'second']);
    } finally {
      release();
    }
  });

  it('waits on an idle queue with one long poll whatever its concurrency, and stops at once, leaving later messages to the next receiver', async () => {
    const queueUrl = await givenQueue();
    const { batches, worker } = recordingWorker();
    const poller = startPoller(queueUrl, worker, { fn: STUB, concurrency: 4 });
    await new Promise((r) => setTimeout(r, 500));
    expect(sent.filter((q) => q === queueUrl)).toHaveLength(1);
    // The long poll has 20 s to go: stop does not wait for it (the test would time out first).
    await poller.stop();
    const { MessageId } = await queue().send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'after' }));
    const { Messages = [] } = await queue().send(
      new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 20, AttributeNames: ['All'] }),
    );
    expect(Messages.map((m) => [m.MessageId, m.Attributes?.ApproximateReceiveCount])).toEqual([[MessageId, '1']]);
    expect(batches).toEqual([]);
  });
});

describe('a fair queue (messages with a MessageGroupId on a standard queue), through the local poller', () => {
  /** `n` messages of `group`, sent in batches of 10 (bodies `<group>-<i>`, in order). */
  const sendGroup = async (queueUrl: string, group: string, n: number) => {
    for (let i = 0; i < n; i += 10)
      await queue().send(
        new SendMessageBatchCommand({
          QueueUrl: queueUrl,
          Entries: Array.from({ length: Math.min(10, n - i) }, (_, j) => ({
            Id: String(j),
            MessageGroupId: group,
            MessageBody: `${group}-${i + j}`,
          })),
        }),
      );
  };

  it('serves a quiet group before the backlog of a group that holds most messages in flight; the backlog still drains, in order', async () => {
    const queueUrl = await givenQueue();
    // A backlog of 100 from the noisy group, then one message from a quiet one: the oldest-first order would hand it out last.
    await sendGroup(queueUrl, 'noisy', 100);
    await sendGroup(queueUrl, 'quiet', 1);
    const batches: { bodies: string[]; groups: (string | undefined)[] }[] = [];
    const worker = async (event: SQSEvent): Promise<SQSBatchResponse> => {
      batches.push({ bodies: event.Records.map((r) => r.body), groups: event.Records.map((r) => r.attributes.MessageGroupId) });
      // Slow work: the first three batches keep 30 of the noisy group's messages in flight, which makes it a noisy neighbour.
      await new Promise((r) => setTimeout(r, 300));
      return { batchItemFailures: [] };
    };
    pollers.push(startPoller(queueUrl, worker, { fn: STUB, concurrency: 4 }));
    await eventually(
      async () => batches.flatMap((b) => b.bodies).length,
      (n) => n >= 101,
    );
    const quietBatch = batches.findIndex((b) => b.bodies.includes('quiet-0'));
    // Three batches of the noisy group's oldest (30 in flight: noisy), then the quiet message first, not after 100.
    expect(batches.slice(0, 3).map((b) => b.bodies)).toEqual(
      [0, 10, 20].map((from) => Array.from({ length: 10 }, (_, i) => `noisy-${from + i}`)),
    );
    expect(quietBatch).toBe(3);
    // Noisy messages are not held back when no quiet one waits: the rest of its backlog, oldest first.
    const noisy = batches.flatMap((b) => b.bodies).filter((b) => b.startsWith('noisy-'));
    expect(noisy).toEqual(Array.from({ length: 100 }, (_, i) => `noisy-${i}`));
    // Each record carries its group, as Lambda's event does.
    expect(new Set(batches.flatMap((b) => b.groups))).toEqual(new Set(['noisy', 'quiet']));
    await eventually(
      () => held(queueUrl),
      (n) => n === 0,
    );
  });

  it('below the noisy share (fewer than 30 in flight) hands out the oldest messages first, whatever their group', async () => {
    const queueUrl = await givenQueue();
    await sendGroup(queueUrl, 'busy', 40);
    await sendGroup(queueUrl, 'other', 1);
    const bodies: string[] = [];
    const worker = async (event: SQSEvent): Promise<SQSBatchResponse> => {
      bodies.push(...event.Records.map((r) => r.body));
      await new Promise((r) => setTimeout(r, 100));
      return { batchItemFailures: [] };
    };
    // Two invocations at once: at most 20 in flight, so no group is noisy.
    pollers.push(startPoller(queueUrl, worker, { fn: STUB, concurrency: 2 }));
    await eventually(
      async () => bodies.length,
      (n) => n >= 41,
    );
    expect(bodies.indexOf('other-0')).toBe(40);
  });
});
