import { shardOf } from './shards.ts';

// The sweeps' deployment-wide partitions (the due reminders, the approvals' and callbacks' deadlines,
// every schedule), each spread over SWEEP_SHARDS partition key values by a stable hash of the item's
// id (`<family>#<shard>`, `shardOf` of the write-sharded listings), its sort key unchanged (a time
// first where it was one: time order holds within each shard). The sweeps read every shard, a few at
// a time, under one bound per pass.

/**
 * Shards of each sweep family, sized by the heat model (docs/performance.md "Heat"): in (b), one
 * account at 1,000 runs/s with an approval and a callback each, the approvals' deadline index takes
 * about 4,000 write units a second (each entry put and removed in a transaction, doubled), 250 a
 * shard; in (d) the due reminders about 1,100, 70 a shard. It may only grow: an item keeps the shard
 * it was written with, and the sweeps read shards 0..SWEEP_SHARDS-1.
 */
export const SWEEP_SHARDS = 16;

/** The shard of `family` that the item with this id lives in. */
export const sweepPartition = (family: string, id: string) => `${family}#${shardOf(id, SWEEP_SHARDS)}`;

/**
 * Every partition a sweep reads for `family`: its shards, and the unsharded partition of before
 * (`family` itself), which holds the items written before the upgrade until `npm run admin -- migrate`
 * has moved them (docs/deploying.md "Upgrading"): one Query a pass that finds nothing afterwards.
 */
export const sweepPartitions = (family: string) => [family, ...Array.from({ length: SWEEP_SHARDS }, (_, i) => `${family}#${i}`)];

/** How many shards a sweep reads at once. */
export const SHARDS_AT_ONCE = 4;

/** A budget of pages (or items) shared by the shards of one pass: each takes one before it reads. */
export class PassBudget {
  constructor(
    private left: number,
    private readonly until = Number.POSITIVE_INFINITY,
  ) {}
  /** One more page, if the pass has any left (and time: `until`, a clock time in ms). */
  take(n = 1): boolean {
    if (this.left < n || Date.now() >= this.until) return false;
    this.left -= n;
    return true;
  }
}

/**
 * Run `each` over every partition, `SHARDS_AT_ONCE` at a time, and gather what they return (in the
 * partitions' order). Each pass starts at a shard of its own (at random), so that when a pass's bound
 * runs out before every shard was read, the next one does not begin with the same shards again.
 */
export async function forEachShard<T>(partitions: readonly string[], each: (partition: string) => Promise<T>, atOnce = SHARDS_AT_ONCE) {
  const results: T[] = new Array(partitions.length);
  const first = Math.floor(Math.random() * partitions.length);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < partitions.length; i = next++) {
      const at = (first + i) % partitions.length;
      results[at] = await each(partitions[at] as string);
    }
  };
  await Promise.all(Array.from({ length: Math.min(atOnce, partitions.length) }, worker));
  return results;
}
