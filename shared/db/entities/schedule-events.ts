import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '../../clients.ts';
import { queryPage } from '../query.ts';
import { retentionTtl } from '../retention.ts';
import { RunEvent } from './run-events.ts';

// Access pattern: a schedule's own event log (`schedule.fired` / `skipped` / `failed`), in `seq` order
// (PK ACC#<account>#SCH#<id>, SK SEV#<seq, 12 digits>). A skip or a failure has no run, so these events
// belong to the schedule: numbered by the schedule's counter (`eventSeq` on its item, one atomic add per
// fire: `takeEventSeq`), kept `RETENTION_DAYS` like a run's events. The counter gives each number once,
// so an event's item never meets another's and needs no condition.
export const scheduleEventsPartition = (accountId: string, scheduleId: string) => `ACC#${accountId}#SCH#${scheduleId}`;
const eventSk = (seq: number) => `SEV#${String(seq).padStart(12, '0')}`;

export type ScheduleEvent = RunEvent & { seq: number };

const eventItem = (accountId: string, scheduleId: string, event: ScheduleEvent) => ({
  PK: scheduleEventsPartition(accountId, scheduleId),
  SK: eventSk(event.seq),
  type: 'schedule-event',
  accountId,
  event: JSON.stringify(event),
  ttl: retentionTtl(event.at),
});

/** A transaction item writing one schedule event: in the transaction that records its outcome (the fire's run, the skip). */
export const scheduleEventPut = (accountId: string, scheduleId: string, event: ScheduleEvent) => ({
  Put: { TableName: tableName(), Item: eventItem(accountId, scheduleId, event) },
});

/** Write one schedule event on its own (a failure's, after the update that counted it and gave its seq). */
export async function putScheduleEvent(accountId: string, scheduleId: string, event: ScheduleEvent): Promise<void> {
  await db().send(new PutCommand({ TableName: tableName(), Item: eventItem(accountId, scheduleId, event) }));
}

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
