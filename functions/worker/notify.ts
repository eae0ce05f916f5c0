// SQS consumer of the notifications queue: every outgoing message (event notifications, approval
// messages) is sent and logged by processDelivery (shared/notifications/senders.ts); an approval notice
// is planned into its messages first, each a delivery of its own (shared/notifications/notices.ts), and
// those worth another try go back on the queue one by one, delayed. A failed attempt with
// attempts left is reported as a batch item failure and its visibility is pushed back by the retry
// schedule (or the receiver's Retry-After); a worker that cannot record an attempt throws, so the
// queue's redrive retries it, and after maxReceiveCount the message lands in the notifications DLQ.
// A run never waits for its notifications.
import { ChangeMessageVisibilityCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { SQSEvent, SQSRecord } from 'aws-lambda';
import { queue } from '../../shared/clients.ts';
import { config, requireConfig } from '../../shared/config.ts';
import { workerSettings } from '../bindings.ts';
import { processDelivery, QueueMessage } from '../../shared/notifications/senders.ts';
import { type Later, processNotice } from '../../shared/notifications/notices.ts';
import { logger } from '../../shared/logger.ts';
import { holdMetrics } from '../../shared/metrics.ts';
import { parseMessage } from './message.ts';
import { tenantGroup } from '../../shared/engine/dispatch.ts';

requireConfig(workerSettings('worker/notify'));

const processor = new BatchProcessor(EventType.SQS);

class RetryLater extends Error {
  override name = 'RetryLater';
}

async function deliver(record: SQSRecord) {
  const message = parseMessage(QueueMessage, record);
  if (!message) return void logger.error('malformed notification dropped', { messageId: record.messageId });
  if (message.kind === 'approval') return sendLater(await processNotice(message.payload, message.deliveryId));
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

/** SQS delays a message by at most 15 minutes; a later attempt's copy waits out the rest when it comes (processDelivery). */
const MAX_DELAY_SECONDS = 900;

/** Queue each message's next attempt; one that cannot be queued fails the notice, which comes back and plans them again. */
async function sendLater(later: Later[]) {
  for (const { message, delaySeconds, accountId } of later)
    await queue().send(
      new SendMessageCommand({
        QueueUrl: config().NOTIFY_QUEUE_URL,
        ...tenantGroup(accountId),
        MessageBody: JSON.stringify(message),
        DelaySeconds: Math.min(delaySeconds, MAX_DELAY_SECONDS),
      }),
    );
}

// A batch that failed whole is reported like a partial one: the failed messages alone come back.
// Its metrics go out as one line at the batch's end (`holdMetrics`).
export const handler = async (event: SQSEvent) =>
  holdMetrics(() => processPartialResponse(event, deliver, processor, { throwOnFullBatchFailure: false }));
