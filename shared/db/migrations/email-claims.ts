import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '../../clients.ts';
import type { TransactItem } from '../transact.ts';

// Email claims of before claims were per account (EMAIL#<email> / EMAIL, one per email): no
// migration moves them (a claim cannot be split by account without its user); they are read as
// claims (their partition is the new claims' one), keep their email from being added twice to their
// own account, and go with their member (../entities/user-email.ts).

/** The one claim per email of items written before emails were per account. */
const oldEmailKey = (email: string) => ({ PK: `EMAIL#${email.toLowerCase()}`, SK: 'EMAIL' });

/** Condition item: no claim of the email from before claims were per account is this account's. */
export const notClaimedBefore = (accountId: string, email: string): TransactItem => ({
  ConditionCheck: {
    TableName: tableName(),
    Key: oldEmailKey(email),
    ConditionExpression: 'attribute_not_exists(PK) OR accountId <> :acc',
    ExpressionAttributeValues: { ':acc': accountId },
  },
});

/** Transaction items: the claim from before claims were per account goes with its member, when it is theirs (another account's member's stays). */
export async function releaseClaimBefore(u: { userId: string; email: string }): Promise<TransactItem[]> {
  const { Item: old } = await db().send(new GetCommand({ TableName: tableName(), Key: oldEmailKey(u.email), ConsistentRead: true }));
  if (old?.userId !== u.userId) return [];
  return [
    {
      Delete: {
        TableName: tableName(),
        Key: oldEmailKey(u.email),
        ConditionExpression: 'userId = :uid',
        ExpressionAttributeValues: { ':uid': u.userId },
      },
    },
  ];
}
