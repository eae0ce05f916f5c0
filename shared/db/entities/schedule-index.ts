import { sweepPartition, sweepPartitions } from '../sweep-shards.ts';

// Every schedule of the service, for the scheduled sweep's drift repair (GSI2: SCHEDULES#<shard> /
// <account>#<id>). One partition before: a pass over 100,000 schedules read about 15 MB from it as
// fast as it paged; now SWEEP_SHARDS partitions by the schedule's id, read a few at once.
/** The family of the index's partitions; the unsharded one of before is the family itself. */
export const SCHEDULE_INDEX_FAMILY = 'SCHEDULES';
const ALL = SCHEDULE_INDEX_FAMILY;

/** A schedule item's drift-repair index keys (they never change). */
export const scheduleSweepIndex = (s: { accountId: string; scheduleId: string }) => ({
  GSI2PK: sweepPartition(ALL, s.scheduleId),
  GSI2SK: `${s.accountId}#${s.scheduleId}`,
});

/** Every partition the drift repair reads: the shards, and the unsharded one of before the upgrade. */
export const SCHEDULE_PARTITIONS = sweepPartitions(ALL);
