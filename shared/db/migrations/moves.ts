import { NUDGE_FAMILY } from '../entities/approval-nudge.ts';
import { AUDIT_SHARDS, type AuditActor, auditActorPartition, auditPartition } from '../entities/audit.ts';
import { deliveryKey } from '../entities/delivery.ts';
import { SCHEDULE_INDEX_FAMILY, scheduleSweepIndex } from '../entities/schedule-index.ts';
import { shardOf } from '../shards.ts';
import { sweepPartition } from '../sweep-shards.ts';
import type { Move } from './move.ts';

// The changes of key shape that only `npm run admin -- migrate` applies (./index.ts): no read moves
// these items on its own (those that reads move too are in ./shapes.ts).

/**
 * Before the shards (until 2026-11, commit 8bcdd9c) an account's log was one partition, `AUDIT#<account>`,
 * and an actor's `AUDITBY#<account>#<userId>` (the same sort keys): each such entry moves to its
 * shard. Until it is moved an entry is in no list.
 */
export const auditMove: Move = {
  name: 'audit entries',
  matches: (item) => item.type === 'audit' && typeof item.accountId === 'string' && item.PK === `AUDIT#${item.accountId}`,
  moved: (item) => {
    const shard = shardOf(String(item.auditId), AUDIT_SHARDS);
    const accountId = String(item.accountId);
    const userId = (item.actor as AuditActor | undefined)?.userId;
    return {
      ...item,
      PK: auditPartition(accountId, shard),
      ...(item.GSI1PK !== undefined && userId ? { GSI1PK: auditActorPartition(accountId, userId, shard) } : {}),
    };
  },
};

/**
 * Deliveries were kept under their account's partition (`ACC#<account>` / `DLV#<id>`) before. Their
 * index keys are the same in both shapes, so the run's and the approval's lists read both meanwhile.
 */
export const deliveryMove: Move = {
  name: 'deliveries',
  matches: (item) => item.type === 'delivery' && String(item.PK).startsWith('ACC#') && String(item.SK).startsWith('DLV#'),
  moved: (item) => ({ ...item, ...deliveryKey(String(item.accountId), String(item.deliveryId)) }),
};

/**
 * Idempotency keys were kept under their account's partition (`ACC#<account>` / `IDEM#<scope>#<key>`)
 * before: those still in force move (an expired one is left to TTL). Until then, a request repeated
 * with a key first used before the deploy is not recognised (docs/deploying.md "Upgrading").
 */
export const idempotencyMove: Move = {
  name: 'idempotency keys',
  matches: (item) =>
    item.type === 'idempotency' &&
    String(item.PK).startsWith('ACC#') &&
    String(item.SK).startsWith('IDEM#') &&
    Number(item.ttl) > Date.now() / 1000,
  moved: (item) => ({
    ...item,
    PK: `IDEM#${String(item.PK).slice('ACC#'.length)}#${String(item.SK).slice('IDEM#'.length)}`,
    SK: 'IDEM',
  }),
};

/**
 * Approvals' due reminders were kept in one partition (`APPROVAL#NUDGE`) before: each moves to its
 * shard (the sort key unchanged). Meanwhile the sweep reads the old partition too.
 */
export const nudgeMove: Move = {
  name: 'approval reminders',
  matches: (item) => item.type === 'approvalNudge' && item.PK === NUDGE_FAMILY,
  moved: (item) => ({ ...item, PK: sweepPartition(NUDGE_FAMILY, String(item.approvalId)) }),
};

/**
 * Schedules were indexed in one partition (`SCHEDULES`) before: each item's index key moves to its
 * shard (the item stays where it is). Meanwhile the drift repair reads the old partition too.
 */
export const scheduleIndexMove: Move = {
  name: 'schedule index',
  matches: (item) => item.type === 'schedule' && item.GSI2PK === SCHEDULE_INDEX_FAMILY,
  moved: (item) => ({ ...item, ...scheduleSweepIndex({ accountId: String(item.accountId), scheduleId: String(item.scheduleId) }) }),
};
