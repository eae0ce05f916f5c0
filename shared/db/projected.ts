import { BatchGetCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '../clients.ts';

type Key = { PK: string; SK: string };

/**
 * Some attributes of items by key (at most 100 keys: one BatchGet), in the keys' order; keys without an
 * item are skipped. For lists that show a few fields of large items (a run's steps and outputs, a
 * workflow's definition): DynamoDB charges the whole item's read units all the same, but only the
 * named attributes travel and are parsed. Keys DynamoDB leaves unprocessed are asked again.
 */
export async function getProjected(keys: readonly Key[], attributes: readonly string[]): Promise<Record<string, unknown>[]> {
  if (keys.length === 0) return [];
  if (keys.length > 100) throw new Error('getProjected takes at most 100 keys');
  const names = Object.fromEntries(attributes.map((a, i) => [`#a${i}`, a]));
  const projection = Object.keys(names).join(', ');
  const found: Record<string, unknown>[] = [];
  let pending: Key[] = [...keys];
  for (let attempt = 0; pending.length > 0; attempt++) {
    if (attempt === 3) throw new Error('BatchGet left keys unprocessed three times');
    const res = await db().send(
      new BatchGetCommand({
        RequestItems: { [tableName()]: { Keys: pending, ProjectionExpression: projection, ExpressionAttributeNames: names } },
      }),
    );
    found.push(...(res.Responses?.[tableName()] ?? []));
    pending = (res.UnprocessedKeys?.[tableName()]?.Keys ?? []) as Key[];
  }
  const byKey = new Map(found.map((i) => [`${i.PK}\u0000${i.SK}`, i]));
  return keys.flatMap((k) => byKey.get(`${k.PK}\u0000${k.SK}`) ?? []) as Record<string, unknown>[];
}
