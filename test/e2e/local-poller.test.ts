import { randomBytes } from 'node:crypto';
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  type ReceiveMessageCommandInput,
  type ReceiveMessageCommandOutput,
  SendMessageBatchCommand,
  SendMessageCommand,
} from '@aws-sdk/client-sqs';
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { receiveParameters, startPoller } from '../../infra/local/poller.ts';
import { queue } from '../../shared/clients.ts';
import { eventually } from '../support/engine.ts';

// The local poller against the run's local-aws-sqs, each test on a queue of its own, with stand-in
// workers (what is under test is the event source, not a worker). Every receive the poller sends is
// recorded by SDK middleware on the shared client: its parameters and how many messages it returned.

type Receive = { queueUrl: string; max: number; wait: number; got: number };
const receives: Receive[] = [];
const MIDDLEWARE = 'test-record-receives';

beforeAll(() => {
  queue().middlewareStack.add(
    (next, context) => async (args) => {
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

describe('receiveParameters', () => {
  it('long-polls for one message when none is ready, and takes exactly what is ready (up to a batch) at once otherwise', () => {
    expect(receiveParameters(0, 10)).toEqual({ MaxNumberOfMessages: 1, WaitTimeSeconds: 1 });
    expect(receiveParameters(1, 10)).toEqual({ MaxNumberOfMessages: 1, WaitTimeSeconds: 0 });
    expect(receiveParameters(7, 10)).toEqual({ MaxNumberOfMessages: 7, WaitTimeSeconds: 0 });
    expect(receiveParameters(10, 10)).toEqual({ MaxNumberOfMessages: 10, WaitTimeSeconds: 0 });
    expect(receiveParameters(25, 10)).toEqual({ MaxNumberOfMessages: 10, WaitTimeSeconds: 0 });
    expect(receiveParameters(25, 4)).toEqual({ MaxNumberOfMessages: 4, WaitTimeSeconds: 0 });
  });
});

describe('local poller', () => {
  it('hands a lone message over as soon as it is there: the receive that brings it asks for one', async () => {
    const queueUrl = await givenQueue();
    const { batches, worker } = recordingWorker();
    pollers.push(startPoller(queueUrl, worker));
    // The poller is waiting on an empty queue first: a long poll for a single message.
    await eventually(
      async () => receives.filter((r) => r.queueUrl === queueUrl).length,
      (n) => n >= 1,
    );
    const { MessageId } = await queue().send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: '{"lone":true}' }));
    await eventually(
      async () => batches.length,
      (n) => n >= 1,
    );
    expect(batches[0]?.Records.map((r) => r.messageId)).toEqual([MessageId]);
    const mine = receives.filter((r) => r.queueUrl === queueUrl);
    const brought = mine.find((r) => r.got > 0);
    // local-aws-sqs answers a receive before its wait is over only once it holds MaxNumberOfMessages:
    // asking for one is what makes it answer as soon as the message is there (AWS long polling).
    expect(brought).toMatchObject({ max: 1, got: 1 });
    // No receive waited for a batch to fill: every one that brought messages brought all it asked for.
    for (const r of mine.filter((x) => x.got > 0)) expect(r.got).toBe(r.max);
    await eventually(
      () => held(queueUrl),
      (n) => n === 0,
    );
  });

  it('takes the messages that are waiting in batches of up to 10, each receive answered at once', async () => {
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
    pollers.push(startPoller(queueUrl, worker));
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
      { queueUrl, max: 10, wait: 0, got: 10 },
      { queueUrl, max: 3, wait: 0, got: 3 },
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
    pollers.push(startPoller(queueUrl, worker, { fn: { name: 'slow-worker', timeoutSeconds: 1 } }));
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
    pollers.push(startPoller(queueUrl, worker, { fn: { name: 'crashing-worker', timeoutSeconds: 5 } }));
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
    pollers.push(startPoller(queueUrl, worker, { concurrency: 2 }));
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
});
