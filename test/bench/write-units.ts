import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { TABLE } from '../../shared/db/table.ts';

/**
 * Write units by AWS's published sizing rules, computed from the actual items: a write costs one unit
 * per KB (rounded up) of the larger of the item before and after it; a transaction doubles that; each
 * index whose entry is written costs one unit per KB of the entry, never doubled (DynamoDB applies a
 * transaction's index changes as standard writes); an entry that moves, a new key, is a delete and a
 * put; an update that leaves an index's keys alone costs that keys-only index nothing. Item sizes:
 * attribute names plus values (strings and binaries by their UTF-8 bytes, numbers about one byte per
 * two digits plus one, 1 for booleans and null, lists and maps 3 plus 1 per element plus their
 * contents). DynamoDB Local's own ConsumedCapacity is not used: for transactions it reports figures
 * that do not follow these rules (a transaction of six small items as 6 units, of two as 4).
 */
const KB = 1024;
const units = (bytes: number) => Math.max(1, Math.ceil(bytes / KB));

export function valueBytes(v: unknown): number {
  if (v === null || v === undefined || typeof v === 'boolean') return 1;
  if (typeof v === 'string') return Buffer.byteLength(v);
  if (typeof v === 'number')
    return (
      Math.ceil(
        String(Math.abs(v))
          .replace(/[.e+-]/g, '')
          .replace(/^0+/, '').length / 2,
      ) + 1
    );
  if (v instanceof Uint8Array) return v.byteLength;
  if (Array.isArray(v)) return 3 + v.reduce((n: number, x) => n + 1 + valueBytes(x), 0);
  if (v instanceof Set) return [...v].reduce((n: number, x) => n + valueBytes(x), 0);
  return 3 + itemBytes(v as Record<string, unknown>) + Object.keys(v as object).length;
}

export const itemBytes = (item: Record<string, unknown>) =>
  Object.entries(item).reduce((n, [k, v]) => (v === undefined ? n : n + Buffer.byteLength(k) + valueBytes(v)), 0);

type Item = Record<string, unknown> | undefined;
const indexEntry = (item: Item, ix: (typeof TABLE.indexes)[number]) =>
  item?.[ix.partitionKey] !== undefined && item[ix.sortKey] !== undefined
    ? {
        pk: String(item[ix.partitionKey]),
        sk: String(item[ix.sortKey]),
        bytes: itemBytes({ PK: item.PK, SK: item.SK, [ix.partitionKey]: item[ix.partitionKey], [ix.sortKey]: item[ix.sortKey] }) + 100,
      }
    : undefined;

/** One write's units on one place: the table's item, or an index's entry (named by its own keys). */
export type WritePart = { index: 'table' | (typeof TABLE.indexes)[number]['name']; pk: string; sk: string; units: number };

/**
 * Where one item's write lands and what each part costs, from the item before and after it (undefined:
 * absent; `key` names an item absent both times, a refused write).
 */
export function writeParts(before: Item, after: Item, transactional: boolean, key?: Key): WritePart[] {
  const factor = transactional ? 2 : 1;
  const item = key ?? after ?? before;
  const parts: WritePart[] = [
    {
      index: 'table',
      pk: String(item?.PK),
      sk: String(item?.SK),
      units: units(Math.max(before ? itemBytes(before) : 0, after ? itemBytes(after) : 0)) * factor,
    },
  ];
  for (const ix of TABLE.indexes) {
    const [old, now] = [indexEntry(before, ix), indexEntry(after, ix)];
    if (old?.pk === now?.pk && old?.sk === now?.sk) continue; // keys-only: unchanged keys, no index write
    for (const e of [old, now]) if (e) parts.push({ index: ix.name, pk: e.pk, sk: e.sk, units: units(e.bytes) });
  }
  return parts;
}

/**
 * The bytes DynamoDB stores for one item: the item and each index entry it has (keys only: the
 * table's and the index's keys), each with 100 bytes of overhead.
 */
export function storedBytes(item: Record<string, unknown>): { table: number; indexes: number } {
  const indexes = TABLE.indexes.reduce((n, ix) => n + (indexEntry(item, ix)?.bytes ?? 0), 0);
  return { table: itemBytes(item) + 100, indexes };
}

/** The units one item's write costs, table and indexes (undefined: absent). */
export const writeUnits = (before: Item, after: Item, transactional: boolean): number =>
  writeParts(before, after, transactional).reduce((n, p) => n + p.units, 0);

type Key = { PK: unknown; SK: unknown };
type Input = Record<string, any>;

/** The items a write command touches, and whether it is a transaction. */
export function touchedKeys(command: string, input: Input): { keys: Key[]; transactional: boolean } {
  const key = (i: Input) => ({ PK: i.PK, SK: i.SK });
  switch (command) {
    case 'PutItem':
      return { keys: [key(input.Item)], transactional: false };
    case 'UpdateItem':
    case 'DeleteItem':
      return { keys: [key(input.Key)], transactional: false };
    case 'TransactWriteItems':
      return {
        keys: (input.TransactItems ?? []).map((t: Input) => key(t.Put?.Item ?? t.Update?.Key ?? t.Delete?.Key ?? t.ConditionCheck?.Key)),
        transactional: true,
      };
    case 'BatchWriteItem':
      return {
        keys: (Object.values(input.RequestItems ?? {}) as Input[][])
          .flat()
          .map((r: Input) => key(r.PutRequest?.Item ?? r.DeleteRequest?.Key)),
        transactional: false,
      };
    default:
      return { keys: [], transactional: false };
  }
}

let reader: DynamoDBDocumentClient | undefined;
/** A client of its own (not counted) that reads the items around a write. */
export async function readItems(keys: Key[]): Promise<Item[]> {
  reader ??= DynamoDBDocumentClient.from(new DynamoDBClient({}));
  return Promise.all(
    keys.map(async (Key) => (await reader?.send(new GetCommand({ TableName: process.env.TABLE_NAME, Key, ConsistentRead: true })))?.Item),
  );
}
