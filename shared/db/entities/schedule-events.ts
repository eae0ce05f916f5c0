import { tableName } from '../../clients.ts';
import { queryPage } from '../query.ts';
import { retentionTtl } from '../retention.ts';
import { RunEvent } from './run-events.ts';

// Access pattern: a schedule's own event log (`schedule.fired` / `skipped` / `failed`), in `seq` order
// (PK ACC#<account>#SCH#<id>, SK SEV#<seq, 12 digits>). A skip or a failure has no run, so these events
// belong to the schedule: numbered by the schedule's counter (`eventSeq` on its item, set in the write
// that records the fire), kept `RETENTION_DAYS` like a run's events.
export const scheduleEventsPartition = (accountId: string, scheduleId: string) => `ACC#${accountId}#SCH#${scheduleId}`;
const eventSk = (seq: number) => `SEV#${String(seq).padStart(12, '0')}`;

/** A transaction item writing one schedule event (its `seq` set): beside the schedule's update that took that seq. */
export const scheduleEventPut = (accountId: string, scheduleId: string, event: RunEvent & { seq: number }) => ({
  Put: {
    TableName: tableName(),
    Item: {
      PK: scheduleEventsPartition(accountId, scheduleId),
      SK: eventSk(event.seq),
      type: 'schedule-event',
      accountId,
      event: JSON.stringify(event),
      ttl: retentionTtl(event.at),
    },
    ConditionExpression: 'attribute_not_exists(PK)',
  },
});

/** A page of a schedule's events, by `seq` (oldest first). */
export const listScheduleEvents = (accountId: string, scheduleId: string, limit: number, start?: Record<string, unknown>) =>
  queryPage(
    {
      KeyConditionExpression: 'PK = :pk AND begins_with(SK, :sev)',
      ExpressionAttributeValues: { ':pk': scheduleEventsPartition(accountId, scheduleId), ':sev': 'SEV#' },
    },
    (i) => RunEvent.parse(JSON.parse(String(i.event))),
    limit,
    start,
  );
