import { sweepPartition, sweepPartitions } from '../sweep-shards.ts';

// Every schedule of the service, for the scheduled sweep's drift repair (GSI2: SCHEDULES#<shard> /
// <account>#<id>). One partition before: a pass over 100,000 schedules read about 15 MB from it as
// fast as it paged; now SWEEP_SHARDS partitions by the schedule's id, read a few at once.
const ALL = 'SCHEDULES';

/** A schedule item's drift-repair index keys (they never change). */
export const scheduleSweepIndex = (s: { accountId: string; scheduleId: string }) => ({
  GSI2PK: sweepPartition(ALL, s.scheduleId),
  GSI2SK: `${s.accountId}#${s.scheduleId}`,
});

/** Every partition the drift repair reads: the shards, and the unsharded one of before the upgrade. */
export const SCHEDULE_PARTITIONS = sweepPartitions(ALL);

/**
 * Schedules were indexed in one partition (`SCHEDULES`) before: `npm run admin -- migrate` moves each
 * item's index key to its shard (the item stays where it is). Meanwhile the drift repair reads the old
 * partition too.
 */
export const scheduleIndexMove = {
  name: 'schedule index',
  matches: (item: Record<string, unknown>) => item.type === 'schedule' && item.GSI2PK === ALL,
  moved: (item: Record<string, unknown>) => ({
    ...item,
    ...scheduleSweepIndex({ accountId: String(item.accountId), scheduleId: String(item.scheduleId) }),
  }),
};
