import { DeleteCommand, GetCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '../../clients.ts';
import { isConditionFailure } from '../../errors.ts';
import { applied } from '../update.ts';

// One item moved from an older key shape to its new one: by `npm run admin -- migrate`
// (./index.ts), and by the reads that find an item of the old shape before the migration reached
// it (an approval decided, a callback reported, a due item swept: they then write the new key only).

export type Item = Record<string, unknown>;

/** One change of key shape, owned by its entity module and registered in MOVES (./index.ts). */
export type Move = {
  name: string;
  /** Whether a scanned item is of the old shape. */
  matches(item: Item): boolean;
  /** The item under its new key (every attribute, its index keys as the new shape has them). */
  moved(item: Item): Item;
};

export type Moved = 'moved' | 'superseded' | 'gone';

/**
 * Put the new item (unless it exists) and delete the old one, in one transaction: idempotent, and of
 * two at once (the migration and a read, two reads) one moves it. When the new item exists already it
 * was written since the deploy and is the newer one: the old one is removed (`superseded`). An item
 * whose table key stays (only an index key changes) is updated in place, conditional on the old values.
 */
export async function moveItem(old: Item, moved: Item): Promise<Moved> {
  if (old.PK === moved.PK && old.SK === moved.SK) return moveInPlace(old, moved);
  const oldKey = { TableName: tableName(), Key: { PK: old.PK, SK: old.SK }, ConditionExpression: 'attribute_exists(PK)' };
  try {
    await db().send(
      new TransactWriteCommand({
        TransactItems: [
          { Put: { TableName: tableName(), Item: moved, ConditionExpression: 'attribute_not_exists(PK)' } },
          { Delete: oldKey },
        ],
      }),
    );
    return 'moved';
  } catch (e) {
    if (!isConditionFailure(e)) throw e;
  }
  // The new item exists (written since the deploy: it is the newer one), or the old one is gone (moved by another).
  return (await applied(db().send(new DeleteCommand(oldKey)))) ? 'superseded' : 'gone';
}

/** The attributes that differ set (or removed), conditional on each still holding its old value. */
async function moveInPlace(old: Item, moved: Item): Promise<Moved> {
  const changed = [...new Set([...Object.keys(old), ...Object.keys(moved)])].filter((k) => old[k] !== moved[k]);
  if (changed.length === 0) return 'gone';
  const names = Object.fromEntries(changed.map((k, i) => [`#a${i}`, k]));
  const values: Item = {};
  const set: string[] = [];
  const remove: string[] = [];
  const seen: string[] = [];
  changed.forEach((k, i) => {
    if (moved[k] === undefined) remove.push(`#a${i}`);
    else {
      values[`:n${i}`] = moved[k];
      set.push(`#a${i} = :n${i}`);
    }
    if (old[k] === undefined) seen.push(`attribute_not_exists(#a${i})`);
    else {
      values[`:o${i}`] = old[k];
      seen.push(`#a${i} = :o${i}`);
    }
  });
  const ok = await applied(
    db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: { PK: old.PK, SK: old.SK },
        UpdateExpression: [set.length ? `SET ${set.join(', ')}` : '', remove.length ? `REMOVE ${remove.join(', ')}` : ''].join(' ').trim(),
        ConditionExpression: seen.join(' AND '),
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: Object.keys(values).length ? values : undefined,
      }),
    ),
  );
  return ok ? 'moved' : 'gone';
}

/**
 * An item read consistently at `key`. A miss looks for it at `legacyKey`, where it was kept before
 * the upgrade, and moves what it finds to `key` first (every write goes there); a function without
 * the grant to move it reads it where it is. A read of an unknown id costs one GetItem more, until a
 * later release drops the look (docs/deploying.md "Upgrading").
 */
export async function readMoving(key: Item, legacyKey: Item, move: Move): Promise<Item | undefined> {
  const get = async (Key: Item) => (await db().send(new GetCommand({ TableName: tableName(), Key, ConsistentRead: true }))).Item;
  const item = await get(key);
  if (item) return item;
  const old = await get(legacyKey);
  if (!old) return undefined;
  const moved = move.moved(old);
  // A function that may not write there (a read-only route, the notifications worker) reads it as it is.
  const outcome = await moveItem(old, moved).catch(() => undefined);
  if (outcome === undefined) return old;
  return outcome === 'moved' ? moved : get(key);
}
