// The table's stream consumer on AWS: every new audit entry (an INSERT of an item of type `audit`;
// the event source mapping's filter lets no other record through, and this checks again) goes onto
// the account's default EventBridge bus as `source: "flowgate"`, `detail-type: "Audit entry"`, its
// detail the entry without the table's own attributes, so customers can route it to their SIEM with
// a rule. Locally the stream poller (infra/local/stream-poller.ts) runs the same mapping on DynamoDB
// Local's stream (functions/audit-stream.ts), and the entries go onto a local default bus.
//
// A batch is at most 10 records (PutEvents takes 10 entries). Entries PutEvents reports as failed are
// sent again, twice, within the invocation; what still fails is reported as batch item failures, so
// Lambda retries from the first of them (bounded by the mapping's retries, then the failure
// destination). Delivery is at least once: a retried batch may send an entry again, and consumers
// deduplicate by `detail.auditId`.
import { EventBridgeClient, PutEventsCommand, type PutEventsRequestEntry } from '@aws-sdk/client-eventbridge';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { requireConfig } from '../../shared/config.ts';
import { TABLE } from '../../shared/db/table.ts';
import { isAuditImage } from '../../shared/db/audit-image.ts';
import { logger } from '../../shared/logger.ts';
import { workerSettings } from '../bindings.ts';
import { withPlugins } from '../../shared/sdk-plugins.ts';

requireConfig(workerSettings('worker/audit-events'));

export const AUDIT_EVENT = { source: 'flowgate', detailType: 'Audit entry' } as const;
/** PutEvents' largest request. */
export const PUT_EVENTS_MAX = 10;
/** Sends of the entries PutEvents reported as failed, within one invocation, after the first. */
const RESENDS = 2;

/** The table's own attributes of an audit item: its keys, index keys, item type and TTL; the rest is the entry. */
const TABLE_ATTRIBUTES = new Set<string>([
  TABLE.partitionKey,
  TABLE.sortKey,
  ...TABLE.indexes.flatMap((ix) => [ix.partitionKey, ix.sortKey]),
  'type',
  TABLE.ttlAttribute,
]);

/** An audit item as the stream's new image gives it → the event's detail; undefined for any other record. */
export function auditDetail(record: DynamoDBRecord): Record<string, unknown> | undefined {
  const image = record.dynamodb?.NewImage;
  if (record.eventName !== 'INSERT' || !isAuditImage(image)) return undefined;
  const item = unmarshall(image as Record<string, AttributeValue>);
  return Object.fromEntries(Object.entries(item).filter(([name]) => !TABLE_ATTRIBUTES.has(name)));
}

let client: EventBridgeClient | undefined;
/** The production client; its endpoint is the SDK's own setting (`AWS_ENDPOINT_URL_EVENTBRIDGE`: a local listener in tests). */
const events = () => (client ??= withPlugins(new EventBridgeClient({})));

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

type Pending = { sequenceNumber: string; entry: PutEventsRequestEntry };

/** Sends `batch` (10 at most); returns those still failed after the resends. A request that fails whole fails them all. */
async function put(batch: Pending[]): Promise<Pending[]> {
  let pending = batch;
  for (let attempt = 0; pending.length > 0 && attempt <= RESENDS; attempt++) {
    if (attempt > 0) await sleep(100 * 4 ** (attempt - 1));
    try {
      const { Entries = [], FailedEntryCount = 0 } = await events().send(new PutEventsCommand({ Entries: pending.map((p) => p.entry) }));
      if (FailedEntryCount === 0 && Entries.length === pending.length) return [];
      const failed = pending.filter((_, i) => Entries[i]?.EventId === undefined);
      for (const [i, p] of pending.entries()) {
        const result = Entries[i];
        if (result?.EventId === undefined)
          logger.warn('audit event not put', {
            sequenceNumber: p.sequenceNumber,
            errorCode: result?.ErrorCode,
            errorMessage: result?.ErrorMessage,
          });
      }
      pending = failed;
    } catch (e) {
      logger.warn('PutEvents failed', { entries: pending.length, error: (e as Error).message });
    }
  }
  return pending;
}

export const handler = async (event: DynamoDBStreamEvent): Promise<DynamoDBBatchResponse> => {
  const pending: Pending[] = [];
  for (const record of event.Records) {
    const sequenceNumber = record.dynamodb?.SequenceNumber;
    const detail = auditDetail(record);
    if (!detail || !sequenceNumber) continue;
    // The entry's time (epoch ms) is the event's.
    const at = typeof detail.at === 'number' ? new Date(detail.at) : undefined;
    pending.push({
      sequenceNumber,
      entry: {
        Source: AUDIT_EVENT.source,
        DetailType: AUDIT_EVENT.detailType,
        Detail: JSON.stringify(detail),
        ...(at && !Number.isNaN(at.getTime()) && { Time: at }),
      },
    });
  }
  const failed: Pending[] = [];
  for (let i = 0; i < pending.length; i += PUT_EVENTS_MAX) failed.push(...(await put(pending.slice(i, i + PUT_EVENTS_MAX))));
  if (failed.length > 0)
    logger.error('audit events not put; the batch is retried from the first', { failed: failed.length, of: pending.length });
  return { batchItemFailures: failed.map((p) => ({ itemIdentifier: p.sequenceNumber })) };
};
