import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '../clients.ts';
import { config } from '../config.ts';
import { badRequest } from '../errors.ts';
import { getItems, type Page } from './query.ts';

// Write-sharded listings (docs/data-model.md "Keys that spread"). A listing whose items would all
// land under one partition key value (an account's runs, newest first) is written across N of them,
// `<listing key>#<shard>` with the shard a stable hash of the item's id, so no value takes more than
// its share of the writes; a page reads the N shards in parallel and merges them by sort key.

/** A stable shard of an id, 0..n-1: FNV-1a (32 bits) of its UTF-16 code units, mod n. */
export function shardOf(id: string, n: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 0x01000193);
  return (h >>> 0) % n;
}

/**
 * How many shards a listing is written across and read from (`LIST_SHARDS`). It may only grow: an item
 * keeps the shard it was written with, and a listing reads shards 0..N-1.
 */
export const listShards = (): number => config().LIST_SHARDS;

/** The partition key value of each shard of a listing: `<key>#0` .. `<key>#<N-1>`. */
export const shardKeys = (key: string, n = listShards()) => Array.from({ length: n }, (_, s) => `${key}#${s}`);

/**
 * Where a merged listing goes on: per shard the sort key of the last item taken from it (null: none
 * yet), the shards found at their end, and the last sort key taken (a shard the cursor does not know,
 * added since LIST_SHARDS grew, starts there). Signed into the page's cursor (`shared/db/cursor.ts`).
 */
export type ShardPosition = { p: (string | null)[]; d: number[]; l: string | null };

/** One shard's answer: its next keys in order (`sk`, the sort key), and whether it has more. */
export type ShardAnswer<K> = { found: { sk: string; key: K }[]; more: boolean };
/** Reads `limit` keys of a shard after `after` (exclusive; null: from its start), in the listing's order. */
export type ShardRead<K> = (shard: number, after: string | null, limit: number) => Promise<ShardAnswer<K>>;

/** DynamoDB's order of string keys: by their UTF-8 bytes. */
const compare = (a: string, b: string) => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));

const invalid = () => badRequest('INVALID_CURSOR', 'The cursor is invalid, tampered with, or from another query.');

/** A decoded cursor's position, checked against the listing's N shards (a cursor of another shape: 400). */
export function shardPosition(start: Record<string, unknown> | undefined, n: number): ShardPosition | undefined {
  if (start === undefined) return undefined;
  const { p, d, l } = start as Partial<ShardPosition>;
  const key = (x: unknown) => typeof x === 'string' && x.length <= 1024;
  if (!Array.isArray(p) || p.length > n || !p.every((x) => x === null || key(x))) throw invalid();
  if (!Array.isArray(d) || !d.every((s) => Number.isInteger(s) && s >= 0 && s < p.length)) throw invalid();
  if (l !== null && !key(l)) throw invalid();
  return { p: [...p, ...Array.from({ length: n - p.length }, () => l ?? null)], d, l: l ?? null };
}

/**
 * One merged page of `limit` keys across `n` shards: each shard not at its end read for `limit` keys
 * after its position (in parallel), the answers merged by sort key (ties by shard), the first `limit`
 * kept. Each shard's position moves past what was taken from it, so pages are exact: no key twice,
 * none left out. Newest first, a shard at its end is not read again (what is written later sorts
 * before the cursor); oldest first it is (later items come at its end). `next` is undefined when every
 * shard is at its end.
 */
export async function mergeShards<K>(
  n: number,
  read: ShardRead<K>,
  limit: number,
  start: ShardPosition | undefined,
  oldestFirst = false,
): Promise<{ taken: { shard: number; sk: string; key: K }[]; next?: ShardPosition }> {
  const pos = start ?? { p: Array.from({ length: n }, () => null), d: [], l: null };
  const skipped = new Set(oldestFirst ? [] : pos.d);
  const shards = Array.from({ length: n }, (_, s) => s).filter((s) => !skipped.has(s));
  const answers = await Promise.all(shards.map((s) => read(s, pos.p[s] ?? null, limit)));
  const all = answers.flatMap((a, i) => a.found.map((f) => ({ ...f, shard: shards[i] as number })));
  all.sort((x, y) => (oldestFirst ? compare(x.sk, y.sk) : compare(y.sk, x.sk)) || x.shard - y.shard);
  const taken = all.slice(0, limit);
  const p = [...pos.p];
  for (const t of taken) p[t.shard] = t.sk;
  const done = new Set(skipped);
  answers.forEach((a, i) => {
    const s = shards[i] as number;
    if (!a.more && a.found.every((f) => taken.some((t) => t.shard === s && t.sk === f.sk))) done.add(s);
  });
  if (done.size === n) return { taken };
  const l = taken.at(-1)?.sk ?? pos.l;
  return { taken, next: { p, d: [...done].sort((a, b) => a - b), l } };
}

/** A write-sharded listing: the index (keys only) or the table, its key attributes and its shards' partition key values. */
export type ShardedListing = {
  index?: string;
  partitionKey: string;
  sortKey: string;
  partitions: readonly string[];
  oldestFirst?: boolean;
};

/**
 * One page of a write-sharded listing, as `queryPage` gives one of a single partition: `lastKey` is
 * the position to sign into the cursor, `startKey` the one a cursor gave back. On an index (keys only)
 * the page's items are read in one BatchGet, in the merged order; `keep` filters them there, so a
 * filtered page may be short. Sort keys must be unique within a shard (they hold the item's id).
 */
export async function shardedPage<T>(
  listing: ShardedListing,
  parse: (item: Record<string, unknown>) => T,
  limit: number,
  startKey?: Record<string, unknown>,
  keep?: (item: Record<string, unknown>) => boolean,
): Promise<Page<T>> {
  const { index, partitionKey, sortKey, partitions, oldestFirst = false } = listing;
  const read: ShardRead<Record<string, unknown>> = async (shard, after, n) => {
    const res = await db().send(
      new QueryCommand({
        TableName: tableName(),
        ...(index ? { IndexName: index } : {}),
        KeyConditionExpression: after === null ? '#pk = :pk' : `#pk = :pk AND #sk ${oldestFirst ? '>' : '<'} :after`,
        ExpressionAttributeNames: { '#pk': partitionKey, ...(after === null ? {} : { '#sk': sortKey }) },
        ExpressionAttributeValues: { ':pk': partitions[shard], ...(after === null ? {} : { ':after': after }) },
        ScanIndexForward: oldestFirst,
        Limit: n,
      }),
    );
    const found = (res.Items ?? []).map((key) => ({ sk: String(key[sortKey]), key }));
    return { found, more: res.LastEvaluatedKey !== undefined };
  };
  const { taken, next } = await mergeShards(partitions.length, read, limit, shardPosition(startKey, partitions.length), oldestFirst);
  const keys = taken.map((t) => t.key);
  const items = index ? await getItems(keys.map(({ PK, SK }) => ({ PK: String(PK), SK: String(SK) }))) : keys;
  return { items: items.filter((i) => !keep || keep(i)).map(parse), lastKey: next };
}
