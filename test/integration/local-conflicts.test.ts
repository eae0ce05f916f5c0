import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, PutCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { db, tableName } from '../../shared/clients.ts';
import { withPlugins } from '../../shared/sdk-plugins.ts';

/**
 * DynamoDB's transaction conflicts as the local stack raises them (infra/local/conflicts.ts), on the
 * real DynamoDB Local (which never does): seen through a client without the service's conflict
 * retries, and through the service's own client, which sends a refused call again.
 */

const bare = DynamoDBDocumentClient.from(withPlugins(new DynamoDBClient({})));
const tag = () => Math.random().toString(36).slice(2);
const put = (pk: string, n: number) => ({ Put: { TableName: tableName(), Item: { PK: pk, SK: 'X', n } } });
const read = async (pk: string) => (await db().send(new GetCommand({ TableName: tableName(), Key: { PK: pk, SK: 'X' } }))).Item;

describe('local transaction conflicts', () => {
  it('cancels the second of two transactions on one item (TransactionConflict for that item only), which writes nothing', async () => {
    const [pk, other] = [`CONFLICT#${tag()}`, `CONFLICT#${tag()}`];
    const [a, b] = await Promise.allSettled([
      bare.send(new TransactWriteCommand({ TransactItems: [put(pk, 1)] })),
      bare.send(new TransactWriteCommand({ TransactItems: [put(other, 2), put(pk, 2)] })),
    ]);
    expect(a.status).toBe('fulfilled');
    expect(b).toMatchObject({
      status: 'rejected',
      reason: { name: 'TransactionCanceledException', CancellationReasons: [{ Code: 'None' }, { Code: 'TransactionConflict' }] },
    });
    expect(await read(pk)).toMatchObject({ n: 1 });
    expect(await read(other)).toBeUndefined();
  });

  it('refuses a plain write to an item a transaction holds (TransactionConflictException), but not one a plain write holds', async () => {
    const pk = `CONFLICT#${tag()}`;
    const [, plain] = await Promise.allSettled([
      bare.send(new TransactWriteCommand({ TransactItems: [put(pk, 1)] })),
      bare.send(new PutCommand({ TableName: tableName(), Item: { PK: pk, SK: 'X', n: 2 } })),
    ]);
    expect(plain).toMatchObject({ status: 'rejected', reason: { name: 'TransactionConflictException' } });
    const twoPlain = await Promise.allSettled([
      bare.send(new PutCommand({ TableName: tableName(), Item: { PK: pk, SK: 'X', n: 3 } })),
      bare.send(new PutCommand({ TableName: tableName(), Item: { PK: pk, SK: 'X', n: 4 } })),
    ]);
    expect(twoPlain.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled']);
  });

  it("the service's client sends a refused call again: both transactions land", async () => {
    const pk = `CONFLICT#${tag()}`;
    const update = () =>
      db().send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Update: {
                TableName: tableName(),
                Key: { PK: pk, SK: 'X' },
                UpdateExpression: 'ADD n :one',
                ExpressionAttributeValues: { ':one': 1 },
              },
            },
          ],
        }),
      );
    await Promise.all([update(), update(), update()]);
    expect(await read(pk)).toMatchObject({ n: 3 });
  });
});
