import { DeleteMessageBatchCommand, ReceiveMessageCommand, type Message } from '@aws-sdk/client-sqs';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { WORKER_TIMEOUT_SECONDS } from '../../shared/db/table.ts';
import { queue } from '../../shared/clients.ts';

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
 * Stand-in for Lambda's SQS event source mapping: long-polls the queue, hands SQS-shaped batches to
 * the worker, deletes what succeeded and leaves reported failures (and crashed batches) to come back
 * after the visibility timeout.
 */
export function startPoller(queueUrl: string, worker: Worker, opts: { batchSize?: number } = {}) {
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
            MaxNumberOfMessages: opts.batchSize ?? 10,
            WaitTimeSeconds: 1,
            MessageSystemAttributeNames: ['All'],
            // local-aws-sqs reads only the older parameter; without it every receive count is 1.
            AttributeNames: ['All'],
            MessageAttributeNames: ['All'],
          }),
        );
        if (Messages.length === 0) continue;
        const event: SQSEvent = { Records: Messages.map((m) => toRecord(m, queueArn)) };
        let failed: Set<string>;
        try {
          const deadline = Date.now() + WORKER_TIMEOUT_SECONDS * 1000;
          const result = await worker(event, { getRemainingTimeInMillis: () => deadline - Date.now() } as Context);
          failed = new Set((result?.batchItemFailures ?? []).map((f) => f.itemIdentifier));
        } catch (e) {
          console.error('local poller: worker threw; the batch will be redelivered', e);
          continue;
        }
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
  const running = loop();
  return {
    stop: async () => {
      stopping = true;
      await running;
    },
  };
}
