import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { monotonicFactory } from 'ulid';
import * as z from 'zod';
import { db, tableName } from '../../clients.ts';
import { pooledRandom } from '../../ids.ts';
import type { EventType } from '../event-types.ts';
import { retentionTtl } from '../retention.ts';

// Access pattern: the event log of a run, oldest first (PK ACC#<account>#EX#<id>, SK EV#<ulid>).
/** The partition of a run's own items: its event log and its artifacts. */
export const runPartition = (accountId: string, executionId: string) => `ACC#${accountId}#EX#${executionId}`;

export const RunEvent = z.object({
  eventId: z.string(),
  type: z.string(),
  at: z.number(),
  executionId: z.string(),
  /** The run's sequence number of the event (`nextSeq`); absent only on events written before there were any. */
  seq: z.number().int().optional(),
  data: z.record(z.string(), z.unknown()),
});
export type RunEvent = z.infer<typeof RunEvent>;

const eventUlid = monotonicFactory(pooledRandom);

export function newEvent(executionId: string, type: EventType, data: Record<string, unknown> = {}, at = Date.now()): RunEvent {
  return { eventId: `ev_${eventUlid(at).toLowerCase()}`, type, at, executionId, data };
}

/**
 * Sequence numbers: every event of a run carries `seq`, increasing in the order the run wrote its
 * events and unique within the run, so a receiver can order what it gets (delivery order is not
 * promised). The run item keeps the last one (`seq`), and every write that appends events sets it in
 * the same write: no extra call. While a run waits for an approval, the numbers after its
 * `approval.requested` (S) are kept for the votes of a quorum, its reminders and its escalation
 * (`approvalEventSeq`: S + those written so far, at most 99 votes + 20 reminders + 1 escalation),
 * which are written beside the approval and never touch the run; whatever ends the wait (the
 * decision, an expiry, a cancel, an interruption) takes S + `VOTE_ROOM`.
 */
export const VOTE_ROOM = 128;

/**
 * The seq of an event written beside a waiting approval, from the approval as that write left it:
 * every such write (a vote, a reminder, the escalation) adds one to exactly one of these counts, and
 * DynamoDB applies one item's writes one at a time, so the numbers are unique and in write order.
 */
export const approvalEventSeq = (a: { runSeq?: number; approvals?: number; reminders?: number; escalatedAt?: number }) =>
  (a.runSeq ?? 0) + Math.min((a.approvals ?? 0) + (a.reminders ?? 0) + (a.escalatedAt !== undefined ? 1 : 0), VOTE_ROOM - 1);

/** The seq of the next event of a run in the state read. */
export const nextSeq = (e: { seq?: number; status: string; approvalId?: string }) =>
  (e.seq ?? 0) + (e.status === 'WAITING_APPROVAL' && e.approvalId !== undefined ? VOTE_ROOM : 1);

/** `events` numbered from `first` on, and the run's `seq` after them. */
export function sequenced(first: number, events: readonly RunEvent[]): { events: RunEvent[]; seq: number } {
  return { events: events.map((ev, i) => ({ ...ev, seq: first + i })), seq: first + events.length - 1 };
}

/**
 * A transaction (or batch) item appending events to a run's log: one item per step or transition,
 * holding its events in order (a step's `step.started` and `step.succeeded`, and the run's end when it
 * is the last). Kept `RETENTION_DAYS` after it was written, or until `ttl` (the run's, written with its end).
 */
export const eventsPut = (accountId: string, events: readonly RunEvent[], ttl?: number) => {
  const [first] = events;
  if (!first) throw new Error('eventsPut needs at least one event');
  return {
    Put: {
      TableName: tableName(),
      Item: {
        PK: runPartition(accountId, first.executionId),
        SK: `EV#${first.eventId}`,
        type: 'events',
        accountId,
        events: JSON.stringify(events),
        ttl: ttl ?? retentionTtl(first.at),
      },
    },
  };
};

/** Event groups joined into as few items as fit `max` (events and JSON bytes an item), in order: a run written once, ended. */
export function packEvents(groups: readonly RunEvent[][], max: { events: number; bytes: number }): RunEvent[][] {
  const out: { events: RunEvent[]; bytes: number }[] = [];
  for (const g of groups) {
    const bytes = Buffer.byteLength(JSON.stringify(g));
    const last = out.at(-1);
    if (last && last.events.length + g.length <= max.events && last.bytes + bytes <= max.bytes) {
      last.events.push(...g);
      last.bytes += bytes;
    } else out.push({ events: [...g], bytes });
  }
  return out.map((o) => o.events);
}

const itemEvents = (i: Record<string, unknown>): RunEvent[] =>
  // Items written before events were grouped hold one `event`.
  (i.events === undefined ? [JSON.parse(String(i.event))] : JSON.parse(String(i.events))).map((e: unknown) => RunEvent.parse(e));

/** Where a page of a run's log starts: at the item with sort key `sk` or after it, past its first `skip` events. */
type EventsStart = { sk: string; skip: number };
const isEventsStart = (v: Record<string, unknown> | undefined): v is EventsStart =>
  typeof v?.sk === 'string' && v.sk.startsWith('EV#') && Number.isInteger(v.skip) && (v.skip as number) >= 0;

/** A page of a run's log, oldest first: `limit` events, across items; `lastKey` (for the cursor) when more may follow. */
export async function listEvents(accountId: string, executionId: string, limit: number, start?: Record<string, unknown>) {
  let { sk, skip } = isEventsStart(start) ? start : { sk: 'EV#', skip: 0 };
  const items: RunEvent[] = [];
  for (;;) {
    const res = await db().send(
      new QueryCommand({
        TableName: tableName(),
        KeyConditionExpression: 'PK = :pk AND SK BETWEEN :from AND :to',
        ExpressionAttributeValues: { ':pk': runPartition(accountId, executionId), ':from': sk, ':to': 'EV$' },
        Limit: limit - items.length,
      }),
    );
    for (const item of res.Items ?? []) {
      const events = itemEvents(item).slice(skip);
      const room = limit - items.length;
      items.push(...events.slice(0, room));
      // Full: the next page starts inside this item, or just after it.
      if (events.length > room) return { items, lastKey: { sk: String(item.SK), skip: skip + room } };
      skip = 0;
      sk = `${String(item.SK)}\u0000`;
      if (items.length === limit) return { items, lastKey: res.LastEvaluatedKey || item !== res.Items?.at(-1) ? { sk, skip } : undefined };
    }
    if (!res.LastEvaluatedKey) return { items, lastKey: undefined };
  }
}

/**
 * The events of one iteration of a `for_each` (`iteration`, 0-based) written since `since` (the loop's
 * last start), without paging the log: one Query of the run's log filtered by DynamoDB to the items
 * whose events name that iteration (`"iteration":N`), so only those come back; another call only per
 * MB of log read. From the log's start: an item holds the events of one write, and a run written once
 * packs many steps' events into an item keyed by its first, older than the loop. The caller keeps the
 * events of the loop's own steps (another loop's iteration N shares the number).
 */
export async function iterationEvents(accountId: string, executionId: string, since: number, iteration: number) {
  const events: RunEvent[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const res = await db().send(
      new QueryCommand({
        TableName: tableName(),
        KeyConditionExpression: 'PK = :pk AND SK BETWEEN :from AND :to',
        // Items written before events were grouped hold one `event`.
        FilterExpression: 'contains(#events, :a) OR contains(#events, :b) OR contains(#event, :a) OR contains(#event, :b)',
        ExpressionAttributeNames: { '#events': 'events', '#event': 'event' },
        ExpressionAttributeValues: {
          ':pk': runPartition(accountId, executionId),
          ':from': 'EV#',
          ':to': 'EV$',
          ':a': `"iteration":${iteration},`,
          ':b': `"iteration":${iteration}}`,
        },
        ExclusiveStartKey: start,
      }),
    );
    for (const item of res.Items ?? []) events.push(...itemEvents(item).filter((e) => e.data.iteration === iteration && e.at >= since));
    start = res.LastEvaluatedKey;
  } while (start);
  return events;
}
