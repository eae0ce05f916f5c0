import { DeleteCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import { db, tableName } from '../../clients.ts';
import { sweepPartition, sweepPartitions } from '../sweep-shards.ts';
import type { TransactItem } from '../transact.ts';
import { type Approval, approvalKey } from './approval.ts';

// Access pattern: the pending approvals whose next reminder or escalation is due, earliest first,
// for the scheduled sweep (PK APPROVAL#NUDGE#<shard>, SK <due time>#<account>#<approval>; the shard a
// hash of the approval's id, `shared/db/sweep-shards.ts`, so a million reminders an hour spread over
// SWEEP_SHARDS partitions, each in time order): no scan and no index. One item per approval with
// `remind` or `escalate` still to do; the sweep's transaction that sends a reminder or escalates
// moves it to the next due time (or deletes it), and an item whose approval was handled meanwhile is
// deleted when it comes due. Items of before the upgrade sit in the unsharded APPROVAL#NUDGE, which
// the sweep reads too (`NUDGE_PARTITIONS`) until `npm run admin -- migrate` has moved them (`nudgeMove`).
/** The family of the due items' partitions (`sweepPartition`); the unsharded one of before is the family itself. */
export const NUDGE_FAMILY = 'APPROVAL#NUDGE';
const FAMILY = NUDGE_FAMILY;
const at = (ms: number) => String(ms).padStart(15, '0');

/** Every partition the sweep reads: the shards and the unsharded one of before. */
export const NUDGE_PARTITIONS = sweepPartitions(FAMILY);

export const DueNudge = z.object({ PK: z.string(), accountId: z.string(), approvalId: z.string(), SK: z.string() });
export type DueNudge = z.infer<typeof DueNudge>;

type NudgeState = Pick<Approval, 'remind' | 'reminders' | 'nextRemindAt' | 'escalate' | 'escalatedAt'>;

/** When the approval next needs the sweep: its next reminder (while some are left) or its escalation; undefined when neither. */
export function nextDue(a: NudgeState): number | undefined {
  const times = [
    a.remind && a.nextRemindAt !== undefined && (a.reminders ?? 0) < a.remind.max ? a.nextRemindAt : undefined,
    a.escalate && a.escalatedAt === undefined ? a.escalate.at : undefined,
  ].filter((t): t is number => t !== undefined);
  return times.length ? Math.min(...times) : undefined;
}

const dueKey = (a: Pick<Approval, 'accountId' | 'approvalId'>, due: number) => ({
  PK: sweepPartition(FAMILY, a.approvalId),
  SK: `${at(due)}#${a.accountId}#${a.approvalId}`,
});

/** The transaction item that schedules the approval's next nudge (none when nothing is left to do). */
export const nudgePut = (a: Pick<Approval, 'accountId' | 'approvalId'> & NudgeState) => {
  const due = nextDue(a);
  if (due === undefined) return [];
  return [
    {
      Put: {
        TableName: tableName(),
        Item: { ...dueKey(a, due), type: 'approvalNudge', accountId: a.accountId, approvalId: a.approvalId, due },
      },
    },
  ];
};

/** Whether `n` is the approval's due item as it stands (not one left behind: moved by the migration while a sweep sent its reminder). */
export const isCurrent = (n: DueNudge, a: Pick<Approval, 'accountId' | 'approvalId'> & NudgeState) => {
  const due = nextDue(a);
  if (due === undefined) return false;
  const key = dueKey(a, due);
  return key.PK === n.PK && key.SK === n.SK;
};

/** The transaction item that removes a due item (the one the sweep read, in whichever partition it was). */
export const nudgeDelete = (n: DueNudge) => ({ Delete: { TableName: tableName(), Key: { PK: n.PK, SK: n.SK } } });

/** Delete a due item (its approval was handled, or it is a copy left behind). */
export async function deleteNudge(n: DueNudge): Promise<void> {
  await db().send(new DeleteCommand(nudgeDelete(n).Delete));
}

/** Transaction item: the approval's write by the reminder sweep (shared/domain/nudges.ts): its new counts, conditional on PENDING and on the counts read (one sweep lands). */
export function nudgedApprovalItem(a: Approval, next: Approval): TransactItem {
  const seen = (name: string, value: number | undefined) =>
    value === undefined ? `attribute_not_exists(${name})` : `${name} = :seen${name.slice(1)}`;
  const values: Record<string, unknown> = { ':pending': 'PENDING' };
  for (const [k, v] of [
    ['r', a.reminders],
    ['e', a.escalatedAt],
    ['a', a.approvals],
  ] as const)
    if (v !== undefined) values[`:seen${k}`] = v;
  const set: string[] = [];
  if (next.reminders !== a.reminders) {
    set.push('#r = :r', '#n = :n');
    Object.assign(values, { ':r': next.reminders, ':n': next.nextRemindAt });
  }
  if (next.escalatedAt !== a.escalatedAt) {
    set.push('#e = :e', '#v = :v');
    Object.assign(values, { ':e': next.escalatedAt, ':v': next.reviewers });
  }
  return {
    Update: {
      TableName: tableName(),
      Key: approvalKey(a.accountId, a.approvalId),
      UpdateExpression: `SET ${set.join(', ')}`,
      ConditionExpression: ['#status = :pending', seen('#r', a.reminders), seen('#e', a.escalatedAt), seen('#a', a.approvals)].join(
        ' AND ',
      ),
      ExpressionAttributeNames: {
        '#status': 'status',
        '#r': 'reminders',
        '#e': 'escalatedAt',
        '#a': 'approvals',
        ...(set.includes('#n = :n') ? { '#n': 'nextRemindAt' } : {}),
        ...(set.includes('#v = :v') ? { '#v': 'reviewers' } : {}),
      },
      ExpressionAttributeValues: values,
    },
  };
}

/** Due items of one partition up to `now`, earliest first (one page, read consistently: a moved item is not seen twice). */
export async function listDueNudgesIn(partition: string, now: number, limit: number): Promise<DueNudge[]> {
  const { Items = [] } = await db().send(
    new QueryCommand({
      TableName: tableName(),
      KeyConditionExpression: 'PK = :pk AND SK < :bound',
      ExpressionAttributeValues: { ':pk': partition, ':bound': at(now + 1) },
      ConsistentRead: true,
      Limit: limit,
    }),
  );
  return Items.map((i) => DueNudge.parse(i));
}

/** Due items of every partition up to `now`, a page of each (tests and tools: the sweep reads shard by shard). */
export async function listDueNudges(now: number, limit: number): Promise<DueNudge[]> {
  const pages = await Promise.all(NUDGE_PARTITIONS.map((p) => listDueNudgesIn(p, now, limit)));
  return pages.flat();
}
