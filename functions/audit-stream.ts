import { AUDIT_IMAGE_PATTERN } from '../shared/db/audit-image.ts';

/**
 * The audit-events worker's event source mapping: the table's stream (new images) → the worker
 * (functions/worker/audit-events.ts). The CDK stack builds the mapping from this
 * (infra/constructs/audit-events.ts) and the local stack's stream poller applies the same settings
 * (infra/local/stream-poller.ts), so what the tests prove of them is what AWS does.
 *
 * - `filter`: Lambda's event filtering, applied before batching: only new account audit entries,
 *   items of type `audit` under `AUDIT#<account>` (an approval's own history records are of type
 *   `audit` too, under the approval's run: not these). The worker checks again.
 * - `batchSize`: PutEvents takes 10 entries a request.
 * - `bisectBatchOnFunctionError`: a batch whose invocation fails (an error, a timeout) is split in two
 *   halves, each tried on its own; a split does not use up a retry (AWS: "Splitting batches doesn't
 *   consume the retry quota").
 * - `reportBatchItemFailures`: the worker reports the entries it could not put; Lambda takes the
 *   lowest reported sequence number as the checkpoint and retries the batch from it.
 * - `maximumRetryAttempts`: retries of a failing batch (after its first try); then the batch's
 *   description (shard, first and last sequence numbers, stream ARN: not the records) goes to the DLQ
 *   and the shard moves on. Until then the shard waits: its records are processed in order.
 */
export const AUDIT_EVENTS_MAPPING = {
  filter: {
    eventName: ['INSERT'],
    dynamodb: { NewImage: AUDIT_IMAGE_PATTERN },
  },
  batchSize: 10,
  bisectBatchOnFunctionError: true,
  reportBatchItemFailures: true,
  maximumRetryAttempts: 10,
  startingPosition: 'TRIM_HORIZON',
} as const;

/** The worker's timeout (a batch's PutEvents with their resends take well under a second). */
export const AUDIT_EVENTS_TIMEOUT_SECONDS = 30;
