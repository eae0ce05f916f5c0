import { BatchGetCommand, QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '../clients.ts';

type Query = Omit<QueryCommandInput, 'TableName' | 'ExclusiveStartKey' | 'Limit'>;
export type Page<T> = { items: T[]; lastKey?: Record<string, unknown> };
type Key = { PK: string; SK: string };

/**
 * One page of a Query (for cursor-paginated lists). On an index (every index projects keys only, so
 * that no write of an item's other attributes costs an index write) the page's items are then read
 * from the table in one BatchGet, in the index's order; `keep` filters them there (an index holds no
 * attribute to filter on), so a filtered page may be short.
 */
export async function queryPage<T>(
  query: Query,
  parse: (item: Record<string, unknown>) => T,
  limit: number,
  startKey?: Record<string, unknown>,
  keep?: (item: Record<string, unknown>) => boolean,
): Promise<Page<T>> {
  const res = await db().send(new QueryCommand({ ...query, TableName: tableName(), Limit: limit, ExclusiveStartKey: startKey }));
  const found = res.Items ?? [];
  const items = query.IndexName ? await getItems(found.map(({ PK, SK }) => ({ PK, SK }) as Key)) : found;
  return { items: items.filter((i) => !keep || keep(i)).map(parse), lastKey: res.LastEvaluatedKey };
}

/** Items by key, in the keys' order; keys without an item (deleted meanwhile) are skipped. `projection`: only these attributes. */
export async function getItems(keys: readonly Key[], consistent = false, projection?: string): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  for (let i = 0; i < keys.length; i += 100) items.push(...(await batchGet(keys.slice(i, i + 100), consistent, projection)));
  const byKey = new Map(items.map((i) => [`${i.PK}\u0000${i.SK}`, i]));
  return keys.flatMap((k) => byKey.get(`${k.PK}\u0000${k.SK}`) ?? []) as Record<string, unknown>[];
}

async function batchGet(keys: Key[], consistent: boolean, projection: string | undefined) {
  const items: Record<string, unknown>[] = [];
  let pending = keys;
  // BatchGet may leave keys unprocessed under throttling; they are asked again (the SDK backs off).
  for (let attempt = 0; pending.length > 0; attempt++) {
    if (attempt === 3) throw new Error('BatchGet left keys unprocessed three times');
    const res = await db().send(
      new BatchGetCommand({
        RequestItems: {
          [tableName()]: { Keys: pending, ConsistentRead: consistent, ...(projection ? { ProjectionExpression: projection } : {}) },
        },
      }),
    );
    items.push(...(res.Responses?.[tableName()] ?? []));
    pending = (res.UnprocessedKeys?.[tableName()]?.Keys ?? []) as Key[];
  }
  return items;
}

/** Every item of a Query, following pages (for small, bounded partitions only). */
export async function queryAll<T>(query: Query, parse: (item: Record<string, unknown>) => T): Promise<T[]> {
  const out: T[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const res = await db().send(new QueryCommand({ ...query, TableName: tableName(), ExclusiveStartKey: startKey }));
    const found = res.Items ?? [];
    const items = query.IndexName ? await getItems(found.map(({ PK, SK }) => ({ PK, SK }) as Key)) : found;
    out.push(...items.map(parse));
    startKey = res.LastEvaluatedKey;
  } while (startKey);
  return out;
}
