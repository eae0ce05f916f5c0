// SQS consumer of the runs queue. Until the engine lands it acknowledges every message; it already
// speaks the partial-batch-failure protocol the event source mapping is configured for.
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { logger } from '../../shared/logger.ts';

export const handler = async (event: SQSEvent): Promise<SQSBatchResponse> => {
  for (const record of event.Records) logger.info('run message received', { messageId: record.messageId });
  return { batchItemFailures: [] };
};
