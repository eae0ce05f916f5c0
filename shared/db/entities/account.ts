import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import { Plan } from '../../config.ts';
import { db, tableName } from '../../clients.ts';
import { notFound, isConditionFailure } from '../../errors.ts';

// Access patterns: get by id.
export const Account = z.object({ accountId: z.string(), name: z.string(), plan: Plan, createdAt: z.number() });
export type Account = z.infer<typeof Account>;

export const accountKey = (accountId: string) => ({ PK: `ACC#${accountId}`, SK: 'ACCOUNT' });

/** The item to put (inside the transaction that also creates the first admin). */
export const accountItem = (a: Account) => ({ ...accountKey(a.accountId), type: 'account', ...a });

export async function getAccount(accountId: string): Promise<Account | undefined> {
  const { Item } = await db().send(new GetCommand({ TableName: tableName(), Key: accountKey(accountId) }));
  return Item ? Account.parse(Item) : undefined;
}

export async function setPlan(accountId: string, plan: Plan): Promise<Account> {
  try {
    const { Attributes } = await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: accountKey(accountId),
        UpdateExpression: 'SET #plan = :plan',
        ConditionExpression: 'attribute_exists(PK)',
        ExpressionAttributeNames: { '#plan': 'plan' },
        ExpressionAttributeValues: { ':plan': plan },
        ReturnValues: 'ALL_NEW',
      }),
    );
    return Account.parse(Attributes);
  } catch (e) {
    if (isConditionFailure(e)) throw notFound('ACCOUNT_NOT_FOUND', `Account ${accountId} does not exist.`);
    throw e;
  }
}
