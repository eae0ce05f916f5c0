// SQS consumer of the notifications queue. A failed delivery is reported as a batch item failure and
// its visibility is pushed back exponentially (SQS's own retry, with backoff); after the queue's
// maxReceiveCount it lands in the notifications DLQ. A run never waits for its notifications.
import { ChangeMessageVisibilityCommand } from '@aws-sdk/client-sqs';
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { SQSEvent, SQSRecord } from 'aws-lambda';
import { queue } from '../../shared/clients.ts';
import { config, requireConfig } from '../../shared/config.ts';
import { workerSettings } from '../bindings.ts';
import { deliverNotification, retryDelaySeconds } from '../../shared/engine/deliver.ts';
import { NotifyMessage } from '../../shared/engine/notify.ts';
import { DeliveryRetry, deliverApprovalNotice } from '../../shared/channels/approval-messages.ts';
import { logger } from '../../shared/logger.ts';
import { emit } from '../../shared/metrics.ts';
import { parseMessage } from './message.ts';

requireConfig(workerSettings('worker/notify'));

const processor = new BatchProcessor(EventType.SQS);

async function deliver(record: SQSRecord) {
  const message = parseMessage(NotifyMessage, record);
  if (!message) return void logger.error('malformed notification dropped', { messageId: record.messageId });
  const id = 'kind' in message ? { approvalId: message.approvalId } : { eventId: message.event.eventId };
  try {
    // Approval messages (Slack, email, Teams): one notice sends or updates all of an approval's.
    if ('kind' in message) await deliverApprovalNotice(message);
    else if ((await deliverNotification(message)) === 'delivered') emit('NotificationDelivered');
  } catch (error) {
    emit('NotificationFailed');
    const receiveCount = Number(record.attributes.ApproximateReceiveCount ?? '1');
    const retryAfter = error instanceof DeliveryRetry ? (error.retryAfterSeconds ?? 0) : 0;
    logger.warn('notification delivery failed; will retry', { ...id, receiveCount, error: (error as Error).message });
    await queue()
      .send(
        new ChangeMessageVisibilityCommand({
          QueueUrl: config().NOTIFY_QUEUE_URL,
          ReceiptHandle: record.receiptHandle,
          VisibilityTimeout: Math.min(43_200, Math.max(retryDelaySeconds(receiveCount), retryAfter)),
        }),
      )
      .catch((e: unknown) => logger.warn('notification backoff not set', { ...id, error: (e as Error).message }));
    throw error;
  }
}

// A batch that failed whole is reported like a partial one: the failed messages alone come back.
export const handler = async (event: SQSEvent) => processPartialResponse(event, deliver, processor, { throwOnFullBatchFailure: false });
