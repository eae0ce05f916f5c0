// SQS consumer of the runs queue, with partial batch failures: a message whose processing threw is
// reported and comes back after the visibility timeout; everything else is acknowledged.
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Context, SQSEvent, SQSRecord } from 'aws-lambda';
import { RunMessage } from '../../shared/engine/dispatch.ts';
import { processRunMessage } from '../../shared/engine/worker.ts';
import { logger } from '../../shared/logger.ts';

const processor = new BatchProcessor(EventType.SQS);

export const handler = async (event: SQSEvent, context?: Context) =>
  processPartialResponse(
    event,
    async (record: SQSRecord) => {
      const parsed = RunMessage.safeParse(JSON.parse(record.body));
      if (!parsed.success) return void logger.error('malformed run message dropped', { messageId: record.messageId });
      await processRunMessage(parsed.data, { remainingMs: () => context?.getRemainingTimeInMillis?.() ?? 60_000 });
    },
    processor,
  );
