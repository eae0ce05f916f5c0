// SQS consumer of the notifications queue: every outgoing message (event notifications, approval
// messages) is sent and logged by processDelivery (shared/notifications/senders.ts). A failed attempt with
// attempts left is reported as a batch item failure and its visibility is pushed back by the retry
// schedule (or the receiver's Retry-After); a worker that cannot record an attempt throws, so the
// queue's redrive retries it, and after maxReceiveCount the message lands in the notifications DLQ.
// A run never waits for its notifications.
import { ChangeMessageVisibilityCommand } from '@aws-sdk/client-sqs';
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { SQSEvent, SQSRecord } from 'aws-lambda';
import { queue } from '../../shared/clients.ts';
import { config, requireConfig } from '../../shared/config.ts';
import { workerSettings } from '../bindings.ts';
import { processDelivery, QueueMessage } from '../../shared/notifications/senders.ts';
import { logger } from '../../shared/logger.ts';
import { parseMessage } from './message.ts';

requireConfig(workerSettings('worker/notify'));

const processor = new BatchProcessor(EventType.SQS);

class RetryLater extends Error {
  override name = 'RetryLater';
}

async function deliver(record: SQSRecord) {
  const message = parseMessage(QueueMessage, record);
  if (!message) return void logger.error('malformed notification dropped', { messageId: record.messageId });
  const { retryInSeconds } = await processDelivery(message);
  if (retryInSeconds === undefined) return;
  await queue()
    .send(
      new ChangeMessageVisibilityCommand({
        QueueUrl: config().NOTIFY_QUEUE_URL,
        ReceiptHandle: record.receiptHandle,
        VisibilityTimeout: retryInSeconds,
      }),
    )
    .catch((e: unknown) => logger.warn('notification backoff not set', { messageId: record.messageId, error: (e as Error).message }));
  throw new RetryLater(`retry in ${retryInSeconds} s`);
}

// A batch that failed whole is reported like a partial one: the failed messages alone come back.
export const handler = async (event: SQSEvent) => processPartialResponse(event, deliver, processor, { throwOnFullBatchFailure: false });
