import { TABLE } from '../../shared/db/table.ts';
import { itemBytes } from './write-units.ts';

/**
 * Read units by AWS's published sizing rules: a strongly consistent read costs one unit per 4 KB
 * (rounded up) of what it reads, an eventually consistent one half that, a transactional one twice
 * that. GetItem and each key of a BatchGetItem: the item's size (an absent item still costs the
 * minimum, one 4 KB unit); a projection does not make it cheaper, so a projected read is priced by the
 * whole item. Query: the sum of the sizes of every item it read (the page's items before a filter or a
 * projection), rounded up once per call, at least one unit. An index (keys only here) reads its
 * entries: their keys. Index queries are eventually consistent.
 */
const FOUR_KB = 4 * 1024;

export function readUnits(bytes: number, read: { consistent: boolean; transactional?: boolean }): number {
  const whole = Math.max(1, Math.ceil(bytes / FOUR_KB));
  return read.transactional ? whole * 2 : read.consistent ? whole : whole / 2;
}

type Item = Record<string, unknown>;
type Input = Record<string, any>;
/** One read's units on one place: an item (`sk` set) or a partition's range (a query, `sk` undefined). */
export type ReadPart = { index: string; pk: string; sk?: string; units: number };

/** What the recorder can read again, uncounted: whole items by key, and a query's items without its filter or projection. */
export type Reread = { item: (key: Item) => Promise<Item | undefined>; query: (input: Input) => Promise<Item[]> };

const keyOf = (i: Item | undefined) => `${String(i?.PK)}\u0000${String(i?.SK)}`;

/** The partition key value a Query names: the `=` term on the table's (or the index's) partition key. */
export function queryPartition(input: Input): string {
  const ix = TABLE.indexes.find((i) => i.name === input.IndexName);
  const attribute = ix ? ix.partitionKey : TABLE.partitionKey;
  const names: Record<string, string> = input.ExpressionAttributeNames ?? {};
  for (const term of String(input.KeyConditionExpression).split(/\s+AND\s+/i)) {
    const m = /^\s*\(?\s*([#\w]+)\s*=\s*(:\w+)\s*\)?\s*$/.exec(term);
    if (m && (names[m[1] as string] ?? m[1]) === attribute) return String(input.ExpressionAttributeValues?.[m[2] as string]);
  }
  throw new Error(`no partition key term in ${input.KeyConditionExpression}`);
}

/** The read parts of one read command, from its input and output (`reread` for projected or filtered reads). */
export async function readParts(command: string, input: Input, output: Input, reread: Reread): Promise<ReadPart[]> {
  const whole = async (key: Item, got: Item | undefined, projected: boolean) => (projected ? reread.item(key) : got);
  switch (command) {
    case 'GetItem': {
      const item = await whole(input.Key, output.Item, input.ProjectionExpression !== undefined);
      return [
        {
          index: 'table',
          pk: String(input.Key.PK),
          sk: String(input.Key.SK),
          units: readUnits(item ? itemBytes(item) : 0, { consistent: !!input.ConsistentRead }),
        },
      ];
    }
    case 'BatchGetItem': {
      const parts: ReadPart[] = [];
      for (const [table, request] of Object.entries(input.RequestItems as Record<string, Input>)) {
        const left = new Set(((output.UnprocessedKeys?.[table]?.Keys ?? []) as Item[]).map(keyOf));
        const found = new Map(((output.Responses?.[table] ?? []) as Item[]).map((i) => [keyOf(i), i]));
        for (const key of request.Keys as Item[]) {
          if (left.has(keyOf(key))) continue; // not read this time: asked again
          const item = await whole(key, found.get(keyOf(key)), request.ProjectionExpression !== undefined);
          parts.push({
            index: 'table',
            pk: String(key.PK),
            sk: String(key.SK),
            units: readUnits(item ? itemBytes(item) : 0, { consistent: !!request.ConsistentRead }),
          });
        }
      }
      return parts;
    }
    case 'Query': {
      const narrowed = input.FilterExpression !== undefined || input.ProjectionExpression !== undefined || input.Select !== undefined;
      const items: Item[] = narrowed ? await reread.query(input) : (output.Items ?? []);
      const bytes = items.reduce((n, i) => n + itemBytes(i), 0);
      return [
        {
          index: input.IndexName ?? 'table',
          pk: queryPartition(input),
          units: readUnits(bytes, { consistent: !input.IndexName && !!input.ConsistentRead }),
        },
      ];
    }
    case 'TransactGetItems':
    case 'Scan':
      throw new Error(`${command}: the heat recorder has no sizing for it (nothing in the service sends it)`);
    default:
      return [];
  }
}
