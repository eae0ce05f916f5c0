import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '../../clients.ts';
import { accountKey, counterKey, existing, layoutOf, range } from './rate-counters.ts';
import { memberGenName } from './user.ts';

// The members' generations copied onto an account's rate counters (./rate-counters.ts): a membership
// change writes them in its own transaction, so a removed member's key is refused on any counter at once.

/**
 * Transaction items recording member `userId`'s generation `gen` on the account item and every counter,
 * conditional on the counters' layout as read (a `reshard` refuses it); raising `copiesVersion` (a
 * `reshard` that read the generations before then refuses itself).
 */
export async function memberGenItems(accountId: string, userId: string, gen: number) {
  const { Item = {} } = await db().send(new GetCommand({ TableName: tableName(), Key: accountKey(accountId), ConsistentRead: true }));
  const names = { '#gen': memberGenName(userId) };
  const values = Object.fromEntries(
    ['rateCounters', 'rateCountersNext', 'rateCountersFrom'].filter((k) => Item[k] !== undefined).map((k) => [`:${k}`, Item[k]]),
  );
  const same = (k: string) => (Item[k] === undefined ? `attribute_not_exists(${k})` : `${k} = :${k}`);
  return [
    {
      Update: {
        TableName: tableName(),
        Key: accountKey(accountId),
        // The layout as read (a change of the counters refuses it); changes of other members' do not.
        UpdateExpression: 'SET #gen = :gen ADD copiesVersion :one',
        ConditionExpression: `attribute_exists(PK) AND ${same('rateCounters')} AND ${same('rateCountersNext')} AND ${same('rateCountersFrom')}`,
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: { ':gen': gen, ':one': 1, ...values },
      },
    },
    ...range(1, existing(layoutOf(Item))).map((j) => ({
      Update: {
        TableName: tableName(),
        Key: counterKey(accountId, j),
        UpdateExpression: 'SET #gen = :gen',
        ConditionExpression: 'attribute_exists(PK)',
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: { ':gen': gen },
      },
    })),
  ];
}
