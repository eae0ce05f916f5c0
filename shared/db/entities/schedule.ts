import type { TransactItem } from '../transact.ts';
import { GetCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import { db, tableName } from '../../clients.ts';
import { asJsonText, jsonText } from '../json.ts';
import { queryAll, queryPage } from '../query.ts';
import { isConditionFailure } from '../../errors.ts';
import { applied, buildUpdate } from '../update.ts';
import { scheduleSweepIndex } from './schedule-index.ts';
type Extra = readonly TransactItem[]; // further items of the same transaction (an audit entry)

// Access patterns: get by account + id (PK ACC#<account>, SK SCH#<id>: a schedule id of another account
// finds nothing) · list a workflow's schedules (GSI1: ACC#<account>#WFSCH#<workflow> / SCH#<id>) · every
// schedule of the service, for the sweep's drift repair (GSI2: SCHEDULES#<shard> / <account>#<id>,
// ./schedule-index.ts; schedule items change their keys never, so counts and fires cost no index
// write) · the account's count of enabled schedules for plan limits (PK ACC#<account>, SK SCHEDULES, `enabled`).
export const OVERLAP = ['skip', 'allow'] as const;

export const LastFailure = z.object({ code: z.string(), message: z.string(), at: z.number() });

export const Schedule = z.object({
  scheduleId: z.string(),
  accountId: z.string(),
  workflowId: z.string(),
  name: z.string(),
  /** EventBridge Scheduler's syntax: `cron(...)`, `rate(...)` or `at(...)` (shared/schedules/expression.ts). */
  expression: z.string(),
  timezone: z.string(),
  variables: jsonText(z.record(z.string(), z.unknown())),
  enabled: z.boolean(),
  overlap: z.enum(OVERLAP),
  startAt: z.number().optional(),
  endAt: z.number().optional(),
  /** Where a rate without `startAt` counts from: its creation, then each change of its expression (shared/schedules/clock.ts `rateAnchor`). */
  anchorAt: z.number().optional(),
  createdBy: z.string(),
  createdAt: z.number(),
  updatedAt: z.number(),
  lastFiredAt: z.number().optional(),
  lastExecutionId: z.string().optional(),
  lastFailure: LastFailure.optional(),
  /** The `updatedAt` of the settings its timer was last written with: the sweep re-writes a timer whose schedule changed since. */
  syncedAt: z.number().optional(),
  fires: z.number().default(0),
  skips: z.number().default(0),
  failures: z.number().default(0),
  /** The last `seq` taken for the schedule's events (`takeEventSeq`, shared/db/entities/schedule-events.ts); absent before its first. */
  eventSeq: z.number().int().optional(),
});
export type Schedule = z.infer<typeof Schedule>;

export const scheduleKey = (accountId: string, scheduleId: string) => ({ PK: `ACC#${accountId}`, SK: `SCH#${scheduleId}` });
export const scheduleCountKey = (accountId: string) => ({ PK: `ACC#${accountId}`, SK: 'SCHEDULES' });

/** The item as stored; the counters live on it too (`fires`, `skips`, `failures`), written by atomic adds. */
export const scheduleItem = (s: Schedule) => ({
  ...scheduleKey(s.accountId, s.scheduleId),
  GSI1PK: `ACC#${s.accountId}#WFSCH#${s.workflowId}`,
  GSI1SK: `SCH#${s.scheduleId}`,
  ...scheduleSweepIndex(s),
  type: 'schedule',
  ...asJsonText(s, ['variables']),
});

const parse = (i: Record<string, unknown>) => Schedule.parse(i);

export async function getSchedule(accountId: string, scheduleId: string, consistent = false): Promise<Schedule | undefined> {
  const { Item } = await db().send(
    new GetCommand({ TableName: tableName(), Key: scheduleKey(accountId, scheduleId), ConsistentRead: consistent }),
  );
  return Item ? parse(Item) : undefined;
}

export const listWorkflowSchedules = (accountId: string, workflowId: string) =>
  queryAll(
    {
      IndexName: 'GSI1',
      KeyConditionExpression: 'GSI1PK = :pk',
      ExpressionAttributeValues: { ':pk': `ACC#${accountId}#WFSCH#${workflowId}` },
    },
    parse,
  );

/** A page of one partition of every schedule of the service (the sweep's drift repair reads each of SCHEDULE_PARTITIONS). */
export const pageAllSchedules = (partition: string, limit: number, startKey?: Record<string, unknown>) =>
  queryPage(
    { IndexName: 'GSI2', KeyConditionExpression: 'GSI2PK = :pk', ExpressionAttributeValues: { ':pk': partition } },
    parse,
    limit,
    startKey,
  );

/** The update of the account's enabled count by `delta`, within `limit` when it grows (a transaction item). */
export const enabledCountUpdate = (accountId: string, delta: 1 | -1, limit?: number) => ({
  Update: {
    TableName: tableName(),
    Key: scheduleCountKey(accountId),
    UpdateExpression: 'ADD #n :d SET #type = :type',
    ...(delta > 0 && limit !== undefined ? { ConditionExpression: 'attribute_not_exists(#n) OR #n < :limit' } : {}),
    ...(delta < 0 ? { ConditionExpression: '#n > :zero' } : {}),
    ExpressionAttributeNames: { '#n': 'enabled', '#type': 'type' },
    ExpressionAttributeValues: {
      ':d': delta,
      ':type': 'scheduleCount',
      ...(delta > 0 && limit !== undefined ? { ':limit': limit } : {}),
      ...(delta < 0 ? { ':zero': 0 } : {}),
    },
  },
});

/** What a change of a schedule writes: its settings, never its counters (fires may count meanwhile). */
const SETTINGS = [
  'name',
  'expression',
  'timezone',
  'variables',
  'enabled',
  'overlap',
  'startAt',
  'endAt',
  'anchorAt',
  'updatedAt',
] as const;

/** Change a schedule as read (`updatedAt` unchanged), counting it in or out of the enabled count; false when it changed meanwhile or the limit is reached. */
export async function replaceSchedule(before: Schedule, next: Schedule, limit: number | undefined, extra: Extra = []): Promise<boolean> {
  const delta = next.enabled === before.enabled ? 0 : next.enabled ? 1 : -1;
  const stored = asJsonText(next, ['variables']) as Record<string, unknown>;
  const set = Object.fromEntries(SETTINGS.filter((k) => stored[k] !== undefined).map((k) => [k, stored[k]]));
  const remove = SETTINGS.filter((k) => stored[k] === undefined);
  return applied(
    db().send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Update: buildUpdate(scheduleKey(before.accountId, before.scheduleId), set, remove, {
              expression: 'updatedAt = :seen',
              values: { ':seen': before.updatedAt },
            }),
          },
          ...(delta === 0 ? [] : [enabledCountUpdate(before.accountId, delta, limit)]),
          ...extra,
        ],
      }),
    ),
  );
}

/** Delete a schedule (and take an enabled one off the count); false when it was gone already. */
export async function deleteScheduleItem(s: Pick<Schedule, 'accountId' | 'scheduleId'>, extra: Extra = []): Promise<boolean> {
  const key = scheduleKey(s.accountId, s.scheduleId);
  const { Item } = await db().send(new GetCommand({ TableName: tableName(), Key: key, ConsistentRead: true }));
  if (!Item) return false;
  return applied(
    db().send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Delete: {
              TableName: tableName(),
              Key: key,
              ConditionExpression: 'enabled = :e',
              ExpressionAttributeValues: { ':e': Item.enabled },
            },
          },
          ...(Item.enabled ? [enabledCountUpdate(s.accountId, -1)] : []),
          ...extra,
        ],
      }),
    ),
  );
}

/**
 * The schedule's event counter (`eventSeq`): one atomic add, outside any transaction, gives the next
 * `seq` of its events (shared/db/entities/schedule-events.ts). A fire takes one when it is about to
 * write its outcome, and keeps it through its retries; outcomes at once never wait for each other on
 * it (no transaction holds a condition on the counter). Unique and increasing; a number taken by a
 * fire that then writes nothing (a duplicate, a crash) is skipped. Undefined: the schedule is gone.
 */
export async function takeEventSeq(s: Pick<Schedule, 'accountId' | 'scheduleId'>): Promise<number | undefined> {
  try {
    const { Attributes } = await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: scheduleKey(s.accountId, s.scheduleId),
        UpdateExpression: 'ADD eventSeq :one',
        ConditionExpression: 'attribute_exists(PK)',
        ExpressionAttributeValues: { ':one': 1 },
        ReturnValues: 'UPDATED_NEW',
      }),
    );
    return Number(Attributes?.eventSeq);
  } catch (e) {
    if (isConditionFailure(e)) return undefined;
    throw e;
  }
}

/**
 * Count a failed fire (`failures`, `lastFailure`): an atomic add. Without a `seq` taken yet, the same
 * write takes the failure event's number (`eventSeq`, as `takeEventSeq`) and answers it; with one,
 * that one is answered. Undefined: the schedule is gone (nothing counted).
 */
export async function countFailure(
  s: Pick<Schedule, 'accountId' | 'scheduleId'>,
  failure: z.infer<typeof LastFailure>,
  seq: number | undefined,
): Promise<number | undefined> {
  try {
    const { Attributes } = await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: scheduleKey(s.accountId, s.scheduleId),
        UpdateExpression: `ADD failures :one${seq === undefined ? ', eventSeq :one' : ''} SET lastFailure = :f`,
        ConditionExpression: 'attribute_exists(PK)',
        ExpressionAttributeValues: { ':one': 1, ':f': failure },
        ReturnValues: 'UPDATED_NEW',
      }),
    );
    return seq ?? Number(Attributes?.eventSeq);
  } catch (e) {
    if (isConditionFailure(e)) return undefined;
    throw e;
  }
}

/**
 * The guard written with a fire's run, in its transaction: the schedule's last run is still the one
 * the fire saw finished (or none), so two fires at once cannot both start a run of a `skip` schedule;
 * and the fire is recorded (`fires`, `lastFiredAt`, `lastExecutionId`). An `allow` schedule's fires
 * do not wait for each other: its guard only asks that the schedule still exists, so fires at once
 * do not refuse each other (the counts are added, the last run is the last one written).
 */
export const firedUpdate = (s: Schedule, executionId: string, now: number) => {
  const seen = s.overlap === 'allow' ? {} : s.lastExecutionId ? { ':seen': s.lastExecutionId } : {};
  return {
    Update: {
      TableName: tableName(),
      Key: scheduleKey(s.accountId, s.scheduleId),
      UpdateExpression: 'ADD fires :one SET lastFiredAt = :now, lastExecutionId = :ex',
      ConditionExpression:
        s.overlap === 'allow'
          ? 'attribute_exists(PK)'
          : s.lastExecutionId === undefined
            ? 'attribute_not_exists(lastExecutionId)'
            : 'lastExecutionId = :seen',
      ExpressionAttributeValues: { ':one': 1, ':now': now, ':ex': executionId, ...seen },
    },
  };
};

/** A skip, recorded as the fire's outcome: the same guard on the last run. */
export const skippedUpdate = (s: Schedule) => ({
  Update: {
    TableName: tableName(),
    Key: scheduleKey(s.accountId, s.scheduleId),
    UpdateExpression: 'ADD skips :one',
    ConditionExpression: s.lastExecutionId === undefined ? 'attribute_not_exists(lastExecutionId)' : 'lastExecutionId = :seen',
    ExpressionAttributeValues: { ':one': 1, ...(s.lastExecutionId ? { ':seen': s.lastExecutionId } : {}) },
  },
});

/** Record that the timer now has the settings of version `updatedAt` (unless the schedule changed again meanwhile). */
export async function markSynced(s: Pick<Schedule, 'accountId' | 'scheduleId' | 'updatedAt'>): Promise<void> {
  await applied(
    db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: scheduleKey(s.accountId, s.scheduleId),
        UpdateExpression: 'SET syncedAt = :u',
        ConditionExpression: 'updatedAt = :u',
        ExpressionAttributeValues: { ':u': s.updatedAt },
      }),
    ),
  );
}

/** Turn a schedule off (an `at()` that fired, an account without access): conditional on it being on. */
export async function disableSchedule(s: Pick<Schedule, 'accountId' | 'scheduleId'>, now: number): Promise<boolean> {
  return applied(
    db().send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Update: {
              TableName: tableName(),
              Key: scheduleKey(s.accountId, s.scheduleId),
              UpdateExpression: 'SET enabled = :f, updatedAt = :now',
              ConditionExpression: 'enabled = :t',
              ExpressionAttributeValues: { ':f': false, ':t': true, ':now': now },
            },
          },
          enabledCountUpdate(s.accountId, -1),
        ],
      }),
    ),
  );
}
