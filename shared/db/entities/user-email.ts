import { DeleteCommand, QueryCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '../../clients.ts';
import { isConditionFailure, isTransactionConflict } from '../../errors.ts';
import { retryConflicts } from '../conflicts.ts';
import type { TransactItem } from '../transact.ts';
import { notClaimedBefore, releaseClaimBefore } from '../migrations/email-claims.ts';
import { getUser, type User, userKey } from './user.ts';

// Access pattern: the members an email signs in as. EMAIL#<email> / ACC#<account>: one claim per
// account that has a member with the email, also what keeps emails unique within an account. An email
// may be a member of several accounts, so no answer about an email depends on another account. Claims
// written before emails were per account (EMAIL#<email> / EMAIL, one per email) are read as claims
// too, and keep their email from being added twice to their own account.

/** The partition of an email's claims (those of before claims were per account too: ../migrations/email-claims.ts). */
const emailPartition = (email: string) => `EMAIL#${email.toLowerCase()}`;
/** An account's claim of an email (what sign-in looks up, and what keeps emails unique in the account). */
export const emailKey = (accountId: string, email: string) => ({ PK: emailPartition(email), SK: `ACC#${accountId}` });
const EMAIL_ITEM = 'email';

/**
 * Transaction items that create a user and claim its email in the account (fails if the account has a
 * member with the email). `claimed`: the email was claimed for this user already (`claimEmail`), and
 * the claim is confirmed instead.
 */
export function createUserItems(u: User, claimed = false): TransactItem[] {
  const email = u.email.toLowerCase();
  return [
    {
      Put: {
        TableName: tableName(),
        Item: { ...userKey(u.accountId, u.userId), type: 'user', ...u, email },
        ConditionExpression: 'attribute_not_exists(PK)',
      },
    },
    claimed
      ? {
          Update: {
            TableName: tableName(),
            Key: emailKey(u.accountId, email),
            UpdateExpression: 'REMOVE pendingUntil',
            ConditionExpression: 'userId = :uid',
            ExpressionAttributeValues: { ':uid': u.userId },
          },
        }
      : {
          Put: {
            TableName: tableName(),
            Item: { ...emailKey(u.accountId, email), type: EMAIL_ITEM, accountId: u.accountId, userId: u.userId },
            ConditionExpression: 'attribute_not_exists(PK)',
          },
        },
    notClaimedBefore(u.accountId, email),
  ];
}

/** How long a claim waits for its user (`claimEmail`): after this, a claim that was never confirmed is free again. */
const CLAIM_SECONDS = 120;

/**
 * Claim an email in an account for a user about to be created, before the work of creating it (the
 * password's hash): a pending claim, confirmed by `createUserItems(u, true)` in the user's transaction.
 * False when the account has a member with the email, or another creation holds it. A claim whose
 * creation never finished (a crash) is free again after `CLAIM_SECONDS`.
 */
export async function claimEmail(accountId: string, email: string, userId: string, now: number): Promise<boolean> {
  const lower = email.toLowerCase();
  const claim = () =>
    db().send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Put: {
              TableName: tableName(),
              Item: { ...emailKey(accountId, lower), type: EMAIL_ITEM, accountId, userId, pendingUntil: now + CLAIM_SECONDS * 1000 },
              ConditionExpression: 'attribute_not_exists(PK) OR pendingUntil < :now',
              ExpressionAttributeValues: { ':now': now },
            },
          },
          notClaimedBefore(accountId, lower),
        ],
      }),
    );
  try {
    // A transaction in flight on the claim (another creation of the email at this moment) is tried again.
    await retryConflicts(claim);
    return true;
  } catch (e) {
    if (isConditionFailure(e) || isTransactionConflict(e)) return false;
    throw e;
  }
}

/** Give up a pending claim (its creation failed); never another user's. */
export async function releaseEmail(accountId: string, email: string, userId: string): Promise<void> {
  await db()
    .send(
      new DeleteCommand({
        TableName: tableName(),
        Key: emailKey(accountId, email),
        ConditionExpression: 'userId = :uid AND attribute_exists(pendingUntil)',
        ExpressionAttributeValues: { ':uid': userId },
      }),
    )
    .catch((e: unknown) => {
      if (!isConditionFailure(e)) throw e;
    });
}

/**
 * Transaction items: remove a user's claim of their email in their account, and the claim from before
 * claims were per account when it is theirs (another account's member's stays).
 */
export async function releaseEmailItems(u: Pick<User, 'accountId' | 'userId' | 'email'>): Promise<TransactItem[]> {
  return [{ Delete: { TableName: tableName(), Key: emailKey(u.accountId, u.email) } }, ...(await releaseClaimBefore(u))];
}

/**
 * The members an email signs in as, one per account (oldest first); a pending claim is none yet.
 * `consistent`: strongly consistent reads.
 */
export async function getUsersByEmail(email: string, consistent = false): Promise<User[]> {
  const { Items = [] } = await db().send(
    new QueryCommand({
      TableName: tableName(),
      KeyConditionExpression: 'PK = :pk',
      ExpressionAttributeValues: { ':pk': emailPartition(email) },
      ConsistentRead: consistent,
    }),
  );
  const claims = Items.filter((i) => i.pendingUntil === undefined);
  const users = await Promise.all(claims.map((i) => getUser(i.accountId as string, i.userId as string, consistent)));
  return users.filter((u): u is User => u !== undefined).sort((a, b) => a.createdAt - b.createdAt || (a.userId < b.userId ? -1 : 1));
}
