import { randomBytes } from 'node:crypto';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { db, tableName } from '../../shared/clients.ts';
import { decodeCursor, encodeCursor } from '../../shared/db/cursor.ts';
import { type ShardedListing, shardedPage, shardKeys, shardOf } from '../../shared/db/shards.ts';

// A write-sharded listing on DynamoDB Local (shared/db/shards.ts): items written across N partition key
// values of a keys-only index, read back in pages merged by sort key, through signed cursors.

const N = 4;
const listing = (): ShardedListing & { key: string } => {
  const key = `TEST#${randomBytes(6).toString('hex')}`;
  return { key, index: 'GSI1', partitionKey: 'GSI1PK', sortKey: 'GSI1SK', partitions: shardKeys(key, N) };
};
let seq = 0;
const newId = () => `it_${Date.now().toString(36)}${String(seq++).padStart(6, '0')}`;
async function put(l: { key: string }, id: string, color = 'red') {
  const Item = { PK: `IT#${id}`, SK: 'ITEM', GSI1PK: `${l.key}#${shardOf(id, N)}`, GSI1SK: `IT#${id}`, id, color, type: 'test' };
  await db().send(new PutCommand({ TableName: tableName(), Item }));
}
const parse = (i: Record<string, unknown>) => String(i.id);

/** Every page through signed cursors, as a client follows `next_cursor`. */
async function follow(l: ShardedListing, limit: number, between?: () => Promise<void>, keep?: (i: Record<string, unknown>) => boolean) {
  const out: string[][] = [];
  let cursor: string | null | undefined;
  do {
    const page = await shardedPage(l, parse, limit, decodeCursor(cursor ?? undefined, 'test'), keep);
    out.push(page.items);
    cursor = encodeCursor(page.lastKey, 'test');
    await between?.();
  } while (cursor);
  return out;
}

describe('a write-sharded listing on DynamoDB', () => {
  it('pages newest first across the shards, exact, with no duplicate or gap while items are added', { timeout: 60_000 }, async () => {
    const l = listing();
    const ids = Array.from({ length: 17 }, newId);
    for (const id of ids) await put(l, id);
    const used = new Set(ids.map((id) => shardOf(id, N)));
    expect(used.size).toBeGreaterThan(1);
    const pages = await follow(l, 5, async () => put(l, newId()));
    expect(pages.map((p) => p.length)).toEqual([5, 5, 5, 2]);
    expect(pages.flat()).toEqual([...ids].reverse());
  });

  it('oldest first as an option', { timeout: 60_000 }, async () => {
    const l = listing();
    const ids = Array.from({ length: 9 }, newId);
    for (const id of ids) await put(l, id);
    expect((await follow({ ...l, oldestFirst: true }, 4)).flat()).toEqual(ids);
  });

  it('filters the page with `keep` (a page may be short) and goes on past what it dropped', { timeout: 60_000 }, async () => {
    const l = listing();
    const ids = Array.from({ length: 10 }, newId);
    for (const [i, id] of ids.entries()) await put(l, id, i % 3 === 0 ? 'blue' : 'red');
    const pages = await follow(l, 4, undefined, (i) => i.color === 'blue');
    expect(pages.flat()).toEqual([ids[9], ids[6], ids[3], ids[0]]);
    expect(pages.length).toBe(3);
  });

  it('refuses a tampered cursor, one of another listing and one of the single-partition shape: 400 INVALID_CURSOR', async () => {
    const l = listing();
    for (let i = 0; i < 3; i++) await put(l, newId());
    const page = await shardedPage(l, parse, 1);
    const cursor = encodeCursor(page.lastKey, 'test') as string;
    const [payload, mac] = cursor.split('.') as [string, string];
    const forged = Buffer.from(JSON.stringify({ k: { p: [null, null, null, null], d: [], l: null }, b: 'test' })).toString('base64url');
    for (const bad of [`${forged}.${mac}`, `${payload}.${mac.slice(0, -2)}xx`, `${payload}x.${mac}`]) {
      expect(() => decodeCursor(bad, 'test')).toThrow(/cursor is invalid/);
    }
    expect(() => decodeCursor(cursor, 'another')).toThrow(/cursor is invalid/);
    const single = decodeCursor(encodeCursor({ PK: 'x', SK: 'y' }, 'test') as string, 'test');
    await expect(shardedPage(l, parse, 1, single)).rejects.toMatchObject({ kind: 'invalid', code: 'INVALID_CURSOR' });
  });
});
