import { DeleteCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '../clients.ts';
import { isConditionFailure } from '../errors.ts';
import { applied } from './update.ts';

export type Item = Record<string, unknown>;

/**
 * Move one item to its new key (`npm run admin -- migrate`, and a read that finds an item of an older
 * shape on a miss): the new item put unless it exists and the old one deleted, in one transaction.
 * `superseded`: the new item existed (written since the deploy: it is the newer one), the old one was
 * removed; `gone`: the old one was moved or removed meanwhile.
 */
export async function moveItem(old: Item, moved: Item): Promise<'moved' | 'superseded' | 'gone'> {
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
  return (await applied(db().send(new DeleteCommand(oldKey)))) ? 'superseded' : 'gone';
}
