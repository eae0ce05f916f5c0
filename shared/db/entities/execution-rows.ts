import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { encodeTime, TIME_MAX } from 'ulid';
import type * as z from 'zod';
import { db, tableName } from '../../clients.ts';
import { getProjected } from '../projected.ts';
import { mergeShards, type ShardPosition, type ShardRead, shardKeys, shardPosition } from '../shards.ts';
import { accountListing, Execution, workflowListing } from './execution.ts';

// Runs as a list shows them (the console's runs list and overview): a window of an account's or a
// workflow's run listing (GSI3 / GSI1, write-sharded, keys only), newest first, optionally within a
// time range, and a few fields of each run. Run ids are ULIDs (`ex_<time><random>`), so the listings'
// sort keys (`EX#<id>`) are in creation order: a time range is a range of sort keys, read by the key
// condition (nothing outside it is read), never by a filter.

/** What a row of a runs list shows of a run. */
export const RunRow = Execution.pick({
  executionId: true,
  accountId: true,
  workflowId: true,
  status: true,
  trigger: true,
  retries: true,
  startedAt: true,
  updatedAt: true,
  finishedAt: true,
  error: true,
  webhookId: true,
  replayOf: true,
});
export type RunRow = z.infer<typeof RunRow>;

/** The attributes read for a row (the ids are the key's; a run of the shape before the upgrade repeats them). */
const ROW_ATTRIBUTES = ['PK', 'SK', ...Object.keys(RunRow.shape)];

function parseRow(item: Record<string, unknown>): RunRow {
  const [kind, accountId, executionId] = String(item.PK).split('#');
  return RunRow.parse(kind === 'EX' && item.SK === 'EXECUTION' ? { ...item, accountId, executionId } : item);
}

/** A millisecond time as the first 10 characters of a ULID made then (lower case, as our ids). */
const idTime = (ms: number) => encodeTime(Math.min(Math.max(0, Math.floor(ms)), TIME_MAX), 10).toLowerCase();

/**
 * The sort keys of runs created from `from` to `to` (milliseconds, both inclusive): the smallest and the
 * largest id of those times (`0`, `z`: Crockford base32's first and last characters).
 */
export const runKeyRange = (from?: number, to?: number) => ({
  lo: from === undefined ? undefined : `EX#ex_${idTime(from)}${'0'.repeat(16)}`,
  hi: to === undefined ? undefined : `EX#ex_${idTime(to)}${'z'.repeat(16)}`,
});

export type RunListing = { workflowId?: string; from?: number; to?: number };

/** DynamoDB's order of string keys: by their UTF-8 bytes. */
const before = (a: string, b: string) => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8')) < 0;

/**
 * Reads one shard newest first: keys below `after` (exclusive; the shard's position) or `hi`
 * (inclusive), at or above `lo`. Both bounds at once is one BETWEEN, which includes its ends: with
 * `after` as its upper end `after` itself is dropped.
 */
function shardReader(index: string, partitions: readonly string[], lo: string | undefined, hi: string | undefined) {
  const pk = index === 'GSI1' ? 'GSI1PK' : 'GSI3PK';
  const sk = index === 'GSI1' ? 'GSI1SK' : 'GSI3SK';
  const read: ShardRead<{ PK: string; SK: string }> = async (shard, after, limit) => {
    const upper = after ?? hi;
    if (lo !== undefined && upper !== undefined && before(upper, lo)) return { found: [], more: false };
    const both = lo !== undefined && upper !== undefined;
    // One key more than asked tells whether the shard has more (a shard found at its end is not read
    // again, and a list's last page has no "Next page" to an empty one); one more again for `after`.
    const ask = limit + 1 + (both && after !== null ? 1 : 0);
    const condition = both ? '#sk BETWEEN :lo AND :up' : lo !== undefined ? '#sk >= :lo' : after !== null ? '#sk < :up' : '#sk <= :up';
    const res = await db().send(
      new QueryCommand({
        TableName: tableName(),
        IndexName: index,
        KeyConditionExpression: upper === undefined && lo === undefined ? '#pk = :pk' : `#pk = :pk AND ${condition}`,
        ExpressionAttributeNames: { '#pk': pk, ...(upper === undefined && lo === undefined ? {} : { '#sk': sk }) },
        ExpressionAttributeValues: {
          ':pk': partitions[shard],
          ...(lo !== undefined ? { ':lo': lo } : {}),
          ...(upper !== undefined ? { ':up': upper } : {}),
        },
        ScanIndexForward: false,
        Limit: ask,
      }),
    );
    const items = (res.Items ?? []).filter((i) => i[sk] !== after);
    const found = items.slice(0, limit).map((i) => ({ sk: String(i[sk]), key: { PK: String(i.PK), SK: String(i.SK) } }));
    return { found, more: items.length > limit || (res.LastEvaluatedKey !== undefined && (res.Items ?? []).length < ask) };
  };
  return read;
}

/** One taken key of a window, with its run's row (undefined: the run is gone, its listing entry not yet). */
export type WindowEntry = { shard: number; sk: string; row: RunRow | undefined };

/**
 * A window of `size` (at most 100) runs of the listing, newest first, after `start` (a position from
 * the window before): one Query per shard (LIST_SHARDS, in parallel; keys only), then one BatchGet of
 * the rows' attributes. `next` is where the window after starts (none: the listing's end).
 */
export async function runWindow(accountId: string, f: RunListing, size: number, start?: Record<string, unknown>) {
  const partitions = shardKeys(f.workflowId !== undefined ? workflowListing(accountId, f.workflowId) : accountListing(accountId));
  const position = shardPosition(start, partitions.length);
  const { lo, hi } = runKeyRange(f.from, f.to);
  const read = shardReader(f.workflowId !== undefined ? 'GSI1' : 'GSI3', partitions, lo, hi);
  const { taken, next } = await mergeShards(partitions.length, read, size, position);
  const rows = (
    await getProjected(
      taken.map((t) => t.key),
      ROW_ATTRIBUTES,
    )
  ).map(parseRow);
  const byId = new Map(rows.map((r) => [r.executionId, r]));
  const entries: WindowEntry[] = taken.map((t) => ({ shard: t.shard, sk: t.sk, row: byId.get(t.sk.slice('EX#'.length)) }));
  return { entries, next, start: position, shards: partitions.length };
}

/**
 * The position just after `entries[upTo]` of a window that began at `start`: each shard past what was
 * taken from it up to there. Shards are not marked at their end (a later window reads them once more
 * and finds that), so no key after the cut is left out.
 */
export function positionAfter(
  start: ShardPosition | undefined,
  shards: number,
  entries: readonly WindowEntry[],
  upTo: number,
): ShardPosition {
  const p = start ? [...start.p] : Array.from({ length: shards }, () => null as string | null);
  for (const e of entries.slice(0, upTo + 1)) p[e.shard] = e.sk;
  return { p, d: start ? [...start.d] : [], l: entries[upTo]?.sk ?? start?.l ?? null };
}
