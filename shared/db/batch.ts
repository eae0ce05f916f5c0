import { BatchWriteCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '../clients.ts';

/**
 * Put new items (at most 25) in one BatchWriteItem: unconditional and not a transaction, so each costs
 * plain write units (a transaction doubles them). For items that cannot exist yet (fresh ids). Items
 * DynamoDB leaves unprocessed under throttling are sent again.
 */
export async function putNew(items: readonly Record<string, unknown>[]): Promise<void> {
  let pending = items.map((Item) => ({ PutRequest: { Item } }));
  for (let attempt = 0; pending.length > 0; attempt++) {
    if (attempt === 4) throw new Error('BatchWrite left items unprocessed four times');
    if (attempt > 0) await new Promise((r) => setTimeout(r, 25 * 2 ** attempt));
    const res = await db().send(new BatchWriteCommand({ RequestItems: { [tableName()]: pending } }));
    pending = (res.UnprocessedItems?.[tableName()] ?? []) as typeof pending;
  }
}
