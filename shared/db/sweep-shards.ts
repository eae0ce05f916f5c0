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

/**
 * What a pass may still take (items: reminders, expiries), shared by its shards: each takes a page's
 * worth before it reads and gives back what the page did not hold, so shards found empty cost
 * nothing. A shard finding nothing left while other shards' pages are out waits for what they give back.
 */
export class PassBudget {
  private out = 0;
  private waiting: (() => void)[] = [];
  constructor(
    private left: number,
    private readonly until = Number.POSITIVE_INFINITY,
  ) {}
  /** Up to `n` more, taken now: 0 when nothing is left (nor out) or the time is up (`until`, a clock time in ms). */
  async take(n: number): Promise<number> {
    for (;;) {
      if (Date.now() >= this.until) return 0;
      if (this.left > 0) {
        const k = Math.min(n, this.left);
        this.left -= k;
        this.out += k;
        return k;
      }
      if (this.out === 0) return 0;
      await new Promise<void>((r) => this.waiting.push(r));
    }
  }
  /** A page that took `took` read `used` of them: the rest is given back. */
  done(took: number, used: number): void {
    this.out -= took;
    this.left += took - used;
    for (const wake of this.waiting.splice(0)) wake();
  }
}

/** What a sweep does with one page of a shard: how many items it read, and whether to read on. */
export type PageDone = { read: number; more: boolean };

/**
 * One pass of a sweep over `partitions`: each shard page by page (`handle(partition, limit)` reads and
 * handles up to `limit` items), a few shards at once, at most `total` items read in all and no page
 * started after `until`.
 */
export async function sweepPass(
  partitions: readonly string[],
  opts: { total: number; page: number; until: number },
  handle: (partition: string, limit: number) => Promise<PageDone>,
): Promise<void> {
  const budget = new PassBudget(opts.total, opts.until);
  await forEachShard(partitions, async (partition) => {
    for (let n = await budget.take(opts.page); n > 0; n = await budget.take(opts.page)) {
      let read = n;
      let more = false;
      try {
        ({ read, more } = await handle(partition, n));
      } finally {
        budget.done(n, read);
      }
      if (!more) return;
    }
  });
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
