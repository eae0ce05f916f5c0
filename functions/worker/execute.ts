// SQS consumer of the runs queue, with partial batch failures: a message whose processing threw is
// reported (even when the whole batch failed) and comes back after the visibility timeout, ending in
// the DLQ after maxReceiveCount; everything else is acknowledged.
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Context, SQSEvent, SQSRecord } from 'aws-lambda';
import { flushCounts } from '../../shared/db/counters.ts';
import { holdMetrics } from '../../shared/metrics.ts';
import { RunMessage } from '../../shared/engine/dispatch.ts';
import { processRunMessage } from '../../shared/engine/worker.ts';
import { logger } from '../../shared/logger.ts';
import { parseMessage } from './message.ts';
import { requireConfig } from '../../shared/config.ts';
import { workerSettings } from '../bindings.ts';

requireConfig(workerSettings('worker/execute'));

const processor = new BatchProcessor(EventType.SQS);

/**
 * The batch's runs, then what they counted (webhook stats, key usage: one write per item, `counters.ts`);
 * its metrics go out as one line at its end (`holdMetrics`).
 */
export const handler = async (event: SQSEvent, context?: Context) =>
  holdMetrics(async () => {
    try {
      return await processPartialResponse(
        event,
        async (record: SQSRecord) => {
          const message = parseMessage(RunMessage, record);
          if (!message) return void logger.error('malformed run message dropped', { messageId: record.messageId });
          await processRunMessage(message, { remainingMs: () => context?.getRemainingTimeInMillis?.() ?? 60_000 });
        },
        processor,
        { throwOnFullBatchFailure: false },
      );
    } finally {
      await flushCounts();
    }
  });
