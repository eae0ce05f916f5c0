import { DeleteMessageBatchCommand, type Message, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { queue } from '../../shared/clients.ts';
import { planDeliveries } from './faults.ts';
import { type FunctionSettings, invoke } from './lambda.ts';

type Worker = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse>;

const toRecord = (m: Message, queueArn: string): SQSRecord => ({
  messageId: m.MessageId as string,
  receiptHandle: m.ReceiptHandle as string,
  body: m.Body ?? '',
  attributes: {
    ApproximateReceiveCount: m.Attributes?.ApproximateReceiveCount ?? '1',
    SentTimestamp: m.Attributes?.SentTimestamp ?? String(Date.now()),
    SenderId: m.Attributes?.SenderId ?? 'local',
    ApproximateFirstReceiveTimestamp: m.Attributes?.ApproximateFirstReceiveTimestamp ?? String(Date.now()),
    // A fair queue's message keeps its tenant (docs/architecture.md "Fair tenants").
    ...(m.Attributes?.MessageGroupId ? { MessageGroupId: m.Attributes.MessageGroupId } : {}),
  },
  messageAttributes: Object.fromEntries(
    Object.entries(m.MessageAttributes ?? {}).map(([k, v]) => [
      k,
      { stringValue: v.StringValue, dataType: v.DataType ?? 'String' } as never,
    ]),
  ),
  md5OfBody: m.MD5OfBody ?? '',
  eventSource: 'aws:sqs',
  eventSourceARN: queueArn,
  awsRegion: process.env.AWS_REGION ?? 'us-east-1',
});

/**
 * Seconds a receive waits for a message when none is there: SQS's longest long poll, as Lambda's
 * event source polls. The local SQS emulator answers it as AWS does (infra/local/emulator-process.ts):
 * as soon as a message is ready, with up to MaxNumberOfMessages of those ready.
 */
export const LONG_POLL_SECONDS = 20;

export type PollerOptions = {
  /** Largest batch handed to the worker (the event source's batchSize). */
  batchSize?: number;
  /** The worker function as Lambda knows it: its timeout bounds every invocation, its grants every AWS call. */
  fn: FunctionSettings;
  /**
   * Invocations at once, as Lambda's event source runs several (up to the mapping's maximum
   * concurrency): each is a receive loop of its own, so a busy batch does not hold the next one back.
   */
  concurrency?: number;
};

/**
 * Stand-in for Lambda's SQS event source mapping: one long poll per queue takes messages as soon as
 * they are there, and up to `concurrency` invocations hand SQS-shaped batches of up to `batchSize`
 * to the worker within the function's timeout, delete what succeeded and leave reported failures,
 * crashed batches and timed-out batches to come back after the visibility timeout. While every
 * invocation is busy nothing is received. Which messages a receive brings is the queue's choice, as on
 * AWS: on a fair queue, quiet tenants' messages before a noisy tenant's backlog (infra/local/fair-queue.ts). `stop()` ends the long poll at once (the emulator takes
 * nothing for a receive whose client hung up) and waits for the invocations at work.
 */
export function startPoller(queueUrl: string, worker: Worker, opts: PollerOptions) {
  const batchSize = opts.batchSize ?? 10;
  const slots = opts.concurrency ?? 1;
  const fn = opts.fn;
  const stopping = new AbortController();
  const queueArn = `arn:aws:sqs:local:000000000000:${queueUrl.split('/').pop()}`;
  const atWork = new Set<Promise<void>>();

  const handle = async (Messages: Message[]) => {
    const event: SQSEvent = { Records: Messages.map((m) => toRecord(m, queueArn)) };
    const outcome = await invoke(fn, worker, event);
    if (outcome.status === 'timeout') {
      console.error(`local poller: ${fn.name} timed out; its batch of ${Messages.length} comes back after the visibility timeout`);
      return;
    }
    if (outcome.status === 'error') {
      console.error(`local poller: ${fn.name} threw; the batch will be redelivered`, outcome.error);
      return;
    }
    const failed = new Set((outcome.result?.batchItemFailures ?? []).map((f) => f.itemIdentifier));
    const done = event.Records.filter((r) => !failed.has(r.messageId));
    if (done.length) {
      await queue().send(
        new DeleteMessageBatchCommand({
          QueueUrl: queueUrl,
          Entries: done.map((r, i) => ({ Id: String(i), ReceiptHandle: r.receiptHandle })),
        }),
      );
    }
  };

  const start = (batch: Message[]) => {
    const job: Promise<void> = handle(batch)
      .catch((e: unknown) => console.error('local poller: delete failed', e))
      .finally(() => atWork.delete(job));
    atWork.add(job);
  };
  /** Waiting deliveries (FAULTS): dropped at the stop, as their messages would come back after the visibility timeout. */
  const waiting = new Set<NodeJS.Timeout>();
  const deliverLater = (message: Message, afterMs: number) => {
    const timer = setTimeout(() => {
      waiting.delete(timer);
      if (!stopping.signal.aborted) start([message]);
    }, afterMs);
    waiting.add(timer);
  };

  const loop = async () => {
    while (!stopping.signal.aborted) {
      if (atWork.size >= slots) {
        await Promise.race(atWork);
        continue;
      }
      try {
        const { Messages = [] } = await queue().send(
          new ReceiveMessageCommand({
            QueueUrl: queueUrl,
            MaxNumberOfMessages: batchSize,
            WaitTimeSeconds: LONG_POLL_SECONDS,
            MessageSystemAttributeNames: ['All'],
            // local-aws-sqs reads only the older parameter; without it every receive count is 1.
            AttributeNames: ['All'],
            MessageAttributeNames: ['All'],
          }),
          { abortSignal: stopping.signal },
        );
        if (Messages.length === 0) continue;
        // A function's messages may come twice or late (FAULTS sqs.duplicate, sqs.delay); a test's stand-in's never.
        const { now, later } = fn.grants ? planDeliveries(Messages) : { now: Messages, later: [] };
        if (now.length) start(now);
        for (const { message, afterMs } of later) deliverLater(message, afterMs);
      } catch (e) {
        if (stopping.signal.aborted) break;
        console.error('local poller: receive failed', e);
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  };
  const running = loop();
  return {
    stop: async () => {
      stopping.abort();
      for (const t of waiting) clearTimeout(t);
      await running;
      await Promise.all(atWork);
    },
  };
}
