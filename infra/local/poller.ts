import {
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  type Message,
  ReceiveMessageCommand,
  type ReceiveMessageCommandInput,
} from '@aws-sdk/client-sqs';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { WORKER_TIMEOUT_SECONDS } from '../../shared/db/table.ts';
import { queue } from '../../shared/clients.ts';
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
 * Messages a receive can take at once. local-aws-sqs counts messages in flight in
 * ApproximateNumberOfMessages (AWS does not) and delayed ones in neither, so the ready ones are the
 * difference. Should a later version count like AWS, this undercounts: batches get smaller, never
 * slower.
 */
async function readyMessages(queueUrl: string): Promise<number> {
  const { Attributes = {} } = await queue().send(
    new GetQueueAttributesCommand({
      QueueUrl: queueUrl,
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
    }),
  );
  const ready = Number(Attributes.ApproximateNumberOfMessages) - Number(Attributes.ApproximateNumberOfMessagesNotVisible);
  return Number.isFinite(ready) ? Math.max(0, ready) : 0;
}

/**
 * What to ask for so the receive returns as soon as there is something, as SQS long polling does on
 * AWS. local-aws-sqs answers a receive only when it holds MaxNumberOfMessages messages or its wait
 * (WaitTimeSeconds plus 40 ms) is over, checking every 10 ms; so the poller asks for exactly what is
 * ready (up to a batch) without waiting, or, when nothing is, long-polls for one message.
 */
export function receiveParameters(
  ready: number,
  batchSize: number,
): Pick<ReceiveMessageCommandInput, 'MaxNumberOfMessages' | 'WaitTimeSeconds'> {
  return ready > 0
    ? { MaxNumberOfMessages: Math.min(ready, batchSize), WaitTimeSeconds: 0 }
    : { MaxNumberOfMessages: 1, WaitTimeSeconds: 1 };
}

export type PollerOptions = {
  /** Largest batch handed to the worker (the event source's batchSize). */
  batchSize?: number;
  /** The worker function as Lambda knows it: its timeout bounds every invocation. */
  fn?: FunctionSettings;
  /**
   * Invocations at once, as Lambda's event source runs several (up to the mapping's maximum
   * concurrency): each is a receive loop of its own, so a busy batch does not hold the next one back.
   */
  concurrency?: number;
};

/**
 * Stand-in for Lambda's SQS event source mapping: takes messages as soon as they are there, hands
 * SQS-shaped batches of up to `batchSize` to the worker within the function's timeout, deletes what
 * succeeded and leaves reported failures, crashed batches and timed-out batches to come back after
 * the visibility timeout.
 */
export function startPoller(queueUrl: string, worker: Worker, opts: PollerOptions = {}) {
  const batchSize = opts.batchSize ?? 10;
  const fn = opts.fn ?? { name: 'worker', timeoutSeconds: WORKER_TIMEOUT_SECONDS };
  // Stopping lets the current long poll (at most 1 s) finish and its batch be processed: an aborted
  // receive would still take messages on the server side and hide them for the visibility timeout.
  let stopping = false;
  const queueArn = `arn:aws:sqs:local:000000000000:${queueUrl.split('/').pop()}`;
  const loop = async () => {
    while (!stopping) {
      try {
        const { Messages = [] } = await queue().send(
          new ReceiveMessageCommand({
            QueueUrl: queueUrl,
            ...receiveParameters(await readyMessages(queueUrl), batchSize),
            MessageSystemAttributeNames: ['All'],
            // local-aws-sqs reads only the older parameter; without it every receive count is 1.
            AttributeNames: ['All'],
            MessageAttributeNames: ['All'],
          }),
        );
        if (Messages.length === 0) continue;
        const event: SQSEvent = { Records: Messages.map((m) => toRecord(m, queueArn)) };
        const outcome = await invoke(fn, worker, event);
        if (outcome.status === 'timeout') {
          console.error(`local poller: ${fn.name} timed out; its batch of ${Messages.length} comes back after the visibility timeout`);
          continue;
        }
        if (outcome.status === 'error') {
          console.error(`local poller: ${fn.name} threw; the batch will be redelivered`, outcome.error);
          continue;
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
      } catch (e) {
        if (stopping) break;
        console.error('local poller: receive failed', e);
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  };
  const running = Promise.all(Array.from({ length: opts.concurrency ?? 1 }, loop));
  return {
    stop: async () => {
      stopping = true;
      await running;
    },
  };
}
