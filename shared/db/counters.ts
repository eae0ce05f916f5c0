import { logger } from '../logger.ts';
import { keepIdentity } from '../sdk-plugins.ts';

// Plain increments that many requests or runs make on one item (a webhook's stats, a key's usage:
// docs/webhooks.md "Stats and key usage"), summed in this function instance and written once per item per
// flush instead of once each. The workers flush at the end of every batch, the sweeps at their end,
// and the HTTP functions at the end of an invocation that finds the last flush a second old or more
// (`http` in shared/http/handler.ts): Lambda freezes an instance between invocations, so nothing is
// written in between. What an instance holds when it crashes or is retired (never invoked again
// after a burst) is lost: a worker's current batch's, an HTTP function's last second's increments.

/** Writes the summed increments of one item (and the latest time they were made at, when it is kept). */
export type CountWriter = (counts: ReadonlyMap<string, number>, latest: number | undefined) => Promise<void>;

/**
 * `within`: how the item's write is run, as the function of its first count (`keepIdentity`). On AWS an
 * instance is one function, so that changes nothing; locally every function shares one process, and a
 * write is then made as the function that counted (its grants, infra/local/iam.ts), not as whichever flushes.
 */
type Pending = { counts: Map<string, number>; latest: number | undefined; write: CountWriter; within: <R>(fn: () => R) => R };

/** An HTTP function writes its counts at most this often (once per invocation otherwise). */
export const FLUSH_INTERVAL_MS = 1000;

const pending = new Map<string, Pending>();
let lastFlush = 0;

function merge(
  item: string,
  counts: Iterable<[string, number]>,
  latest: number | undefined,
  write: CountWriter,
  within: Pending['within'] = keepIdentity(),
) {
  const p = pending.get(item) ?? { counts: new Map<string, number>(), latest: undefined, write, within };
  for (const [name, n] of counts) p.counts.set(name, (p.counts.get(name) ?? 0) + n);
  if (latest !== undefined && (p.latest === undefined || latest > p.latest)) p.latest = latest;
  pending.set(item, p);
}

/**
 * Add increments to `item` (one key per DynamoDB item: the same `write` for every call with it),
 * written at the next flush. `latest`: the time of the use, kept as the maximum (a last-use time).
 */
export function count(item: string, counts: Record<string, number>, write: CountWriter, latest?: number): void {
  merge(item, Object.entries(counts), latest, write);
}

/**
 * Write everything this instance counted: one write per item, all at once. A write that fails puts
 * its counts back for the next flush (logged), so a throttled or failed write loses nothing.
 */
export async function flushCounts(now = Date.now()): Promise<void> {
  lastFlush = now;
  if (pending.size === 0) return;
  const taken = [...pending];
  pending.clear();
  await Promise.all(
    taken.map(async ([item, p]) => {
      try {
        await p.within(() => p.write(p.counts, p.latest));
      } catch (error) {
        logger.warn('counts not written; kept for the next flush', { item, error: error as Error });
        merge(item, p.counts, p.latest, p.write, p.within);
      }
    }),
  );
}

/** The HTTP functions' flush: when something is counted and the last flush is a second old or more. */
export async function flushCountsWhenDue(now = Date.now()): Promise<void> {
  if (pending.size > 0 && now - lastFlush >= FLUSH_INTERVAL_MS) await flushCounts(now);
}
