import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { mergeShards, type ShardPosition, type ShardRead, shardOf, shardPosition } from '../../shared/db/shards.ts';

// The merge of a write-sharded listing (shared/db/shards.ts) on an in-memory model of its shards: each
// shard a sorted list of sort keys, read as DynamoDB's Query reads a partition (`limit` keys after a
// position, whether more follow).

const model = (shards: string[][], oldestFirst = false): { read: ShardRead<string>; reads: number[] } => {
  const reads: number[] = [];
  const read: ShardRead<string> = async (shard, after, limit) => {
    reads.push(shard);
    const sorted = [...(shards[shard] ?? [])].sort();
    if (!oldestFirst) sorted.reverse();
    const rest = after === null ? sorted : sorted.filter((k) => (oldestFirst ? k > after : k < after));
    const found = rest.slice(0, limit).map((sk) => ({ sk, key: sk }));
    return { found, more: rest.length > limit || (rest.length === limit && limit > 0) };
  };
  return { read, reads };
};

/** Every page of a listing, following the positions (as a client follows cursors). */
async function pages(n: number, read: ShardRead<string>, limit: number, oldestFirst = false, between?: () => void) {
  const out: string[][] = [];
  let at: ShardPosition | undefined;
  do {
    const { taken, next } = await mergeShards(n, read, limit, at, oldestFirst);
    out.push(taken.map((t) => t.key));
    at = next && shardPosition(JSON.parse(JSON.stringify(next)), n);
    between?.();
  } while (at && out.length < 10_000);
  return out;
}

const ids = (n: number) => Array.from({ length: n }, (_, i) => `EX#ex_${String(i).padStart(4, '0')}`);
const spread = (keys: string[], n: number) => {
  const shards: string[][] = Array.from({ length: n }, () => []);
  for (const k of keys) shards[shardOf(k, n)]?.push(k);
  return shards;
};

describe('shardOf', () => {
  it('is stable and spreads ids evenly enough', () => {
    expect(shardOf('ex_01jabc', 4)).toBe(shardOf('ex_01jabc', 4));
    const counts = [0, 0, 0, 0];
    for (const k of ids(4000)) counts[shardOf(k, 4)] = (counts[shardOf(k, 4)] ?? 0) + 1;
    for (const c of counts) expect(c).toBeGreaterThan(800);
    for (const k of ids(50)) expect(shardOf(k, 1)).toBe(0);
  });
});

describe('a merged page across shards', () => {
  it('is in order across the shards, newest first, and exactly `limit` keys until the end', async () => {
    const keys = ids(23);
    const { read } = model(spread(keys, 4));
    const got = await pages(4, read, 5);
    expect(got.map((p) => p.length)).toEqual([5, 5, 5, 5, 3]);
    expect(got.flat()).toEqual([...keys].reverse());
  });

  it('oldest first as an option', async () => {
    const keys = ids(11);
    const { read } = model(spread(keys, 3), true);
    expect((await pages(3, read, 4, true)).flat()).toEqual(keys);
  });

  it('reads no shard again once it is at its end (newest first), and ends with no position', async () => {
    const shards = [ids(2), [], ['EX#ex_9999', ...ids(0)]];
    const { read, reads } = model(shards);
    const first = await mergeShards(3, read, 2, undefined);
    expect(first.taken.map((t) => t.key)).toEqual(['EX#ex_9999', 'EX#ex_0001']);
    expect(first.next?.d).toEqual([1, 2]);
    reads.length = 0;
    const second = await mergeShards(3, read, 2, first.next);
    expect(reads).toEqual([0]);
    expect(second.taken.map((t) => t.key)).toEqual(['EX#ex_0000']);
    expect(second.next).toBeUndefined();
  });

  it('has no duplicate and no gap while keys are added between pages (newest first: new keys sort before the cursor)', async () => {
    const shards = spread(ids(40), 4);
    const { read } = model(shards);
    let next = 1000;
    const got = await pages(4, read, 7, false, () => {
      const k = `EX#ex_${next++}`;
      shards[shardOf(k, 4)]?.push(k);
    });
    expect(got.flat()).toEqual([...ids(40)].reverse());
  });

  it('a shard added since the cursor (LIST_SHARDS grew) starts after the last key taken', async () => {
    const keys = ids(10);
    const { read } = model([keys.slice(0, 5), keys.slice(5), ['EX#ex_0003a', 'EX#ex_9999']]);
    const first = await mergeShards(2, read, 4, undefined);
    expect(first.taken.map((t) => t.key)).toEqual(['EX#ex_0009', 'EX#ex_0008', 'EX#ex_0007', 'EX#ex_0006']);
    const grown = shardPosition(first.next, 3);
    expect(grown?.p).toEqual([null, 'EX#ex_0006', 'EX#ex_0006']);
    const after = await mergeShards(3, read, 10, grown);
    expect(after.taken.map((t) => t.key)).toEqual([
      'EX#ex_0005',
      'EX#ex_0004',
      'EX#ex_0003a',
      'EX#ex_0003',
      'EX#ex_0002',
      'EX#ex_0001',
      'EX#ex_0000',
    ]);
  });

  it('refuses a position of another shape or of more shards (400 INVALID_CURSOR)', () => {
    const bad = [
      { PK: 'ACC#a', SK: 'EX#b' },
      { p: 'x', d: [], l: null },
      { p: [null, 1], d: [], l: null },
      { p: [null], d: [3], l: null },
    ];
    for (const b of bad) expect(() => shardPosition(b, 2)).toThrow(/cursor is invalid/);
    expect(() => shardPosition({ p: [null, null, null], d: [], l: null }, 2)).toThrow(/cursor is invalid/);
    expect(shardPosition(undefined, 2)).toBeUndefined();
  });

  it('property: paging through any set of ids in any page size and shard count yields each exactly once, in order', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(fc.stringMatching(/^[0-9a-z]{1,6}$/), { maxLength: 60 }),
        fc.integer({ min: 1, max: 12 }),
        fc.integer({ min: 1, max: 6 }),
        fc.boolean(),
        async (keys, limit, n, oldestFirst) => {
          const { read } = model(spread(keys, n), oldestFirst);
          const got = await pages(n, read, limit, oldestFirst);
          const sorted = [...keys].sort();
          expect(got.flat()).toEqual(oldestFirst ? sorted : sorted.reverse());
          // Every page but the last is full.
          for (const p of got.slice(0, -1)) expect(p).toHaveLength(limit);
        },
      ),
      { numRuns: 300 },
    );
  });
});
