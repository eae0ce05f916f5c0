import { QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '../clients.ts';

type Query = Omit<QueryCommandInput, 'TableName' | 'ExclusiveStartKey' | 'Limit'>;
export type Page<T> = { items: T[]; lastKey?: Record<string, unknown> };

/** One page of a Query (for cursor-paginated lists). */
export async function queryPage<T>(
  query: Query,
  parse: (item: Record<string, unknown>) => T,
  limit: number,
  startKey?: Record<string, unknown>,
): Promise<Page<T>> {
  const res = await db().send(new QueryCommand({ ...query, TableName: tableName(), Limit: limit, ExclusiveStartKey: startKey }));
  return { items: (res.Items ?? []).map(parse), lastKey: res.LastEvaluatedKey };
}

/** Every item of a Query, following pages (for small, bounded partitions only). */
export async function queryAll<T>(query: Query, parse: (item: Record<string, unknown>) => T): Promise<T[]> {
  const out: T[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const res = await db().send(new QueryCommand({ ...query, TableName: tableName(), ExclusiveStartKey: startKey }));
    out.push(...(res.Items ?? []).map(parse));
    startKey = res.LastEvaluatedKey;
  } while (startKey);
  return out;
}
