import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import { Plan } from '../../config.ts';
import { db, tableName } from '../../clients.ts';
import { notFound, isConditionFailure } from '../../errors.ts';
import { genCondition, memberGenName } from './user.ts';

// Access patterns: get by id; the account's request count in the current rate-limit window lives on
// the same item (rateWindow, rateCount), so one write meters a request and returns the plan.
export const Account = z.object({ accountId: z.string(), name: z.string(), plan: Plan, createdAt: z.number() });
export type Account = z.infer<typeof Account>;

export const accountKey = (accountId: string) => ({ PK: `ACC#${accountId}`, SK: 'ACCOUNT' });

/** The item to put (inside the transaction that also creates the first admin). */
export const accountItem = (a: Account) => ({ ...accountKey(a.accountId), type: 'account', ...a });

export async function getAccount(accountId: string): Promise<Account | undefined> {
  const { Item } = await db().send(new GetCommand({ TableName: tableName(), Key: accountKey(accountId) }));
  return Item ? Account.parse(Item) : undefined;
}

/** Change an account's plan: the next metered request of the account meters against it (no cache). */
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

/** A key's owner as the key knows them: their id and the membership generation it was made under. */
export type KeyOwner = { userId: string; gen: number };

/**
 * Count one request in the account's current fixed window (an atomic increment on the account item)
 * and return the count including it, the window's reset and the plan: one round trip, no separate
 * read of the plan, and a plan change applies to the next request. The first request of a window
 * starts it afresh (a second, conditional write); a request whose clock is behind counts in the newer
 * window already started. `undefined` when the account does not exist.
 *
 * With `owner` (a key's request), the write is also conditional on the owner's membership generation
 * on this item being the key's (users.ts `memberGenName`): a key whose owner was disabled or removed
 * since it was made is refused here, in every instance at once, by the write the request makes
 * anyway. `'owner-changed'` then, and nothing is counted.
 */
export async function countAccountRequest(
  accountId: string,
  windowSeconds: number,
  now: number,
  owner?: KeyOwner,
): Promise<{ count: number; resetAt: number; plan: Plan } | 'owner-changed' | undefined> {
  const start = Math.floor(now / 1000 / windowSeconds) * windowSeconds;
  const writes = [
    ['ADD #count :one', '#window >= :start'],
    ['SET #window = :start, #count = :one', '(attribute_not_exists(#window) OR #window < :start)'],
  ] as const;
  const ownerCheck = owner ? ` AND ${genCondition(owner.gen)}` : '';
  // The two conditions cover every state of an existing account, so only a lost race tries again.
  for (let attempt = 0; attempt < 6; attempt++) {
    const [update, condition] = writes[attempt % 2] as (typeof writes)[number];
    try {
      const { Attributes = {} } = await db().send(
        new UpdateCommand({
          TableName: tableName(),
          Key: accountKey(accountId),
          UpdateExpression: update,
          ConditionExpression: `attribute_exists(PK) AND ${condition}${ownerCheck}`,
          ExpressionAttributeNames: {
            '#window': 'rateWindow',
            '#count': 'rateCount',
            ...(owner ? { '#gen': memberGenName(owner.userId) } : {}),
          },
          ExpressionAttributeValues: { ':one': 1, ':start': start, ...(owner ? { ':gen': owner.gen } : {}) },
          ReturnValues: 'ALL_NEW',
        }),
      );
      return {
        count: Number(Attributes.rateCount),
        resetAt: Number(Attributes.rateWindow) + windowSeconds,
        plan: Account.parse(Attributes).plan,
      };
    } catch (e) {
      if (!isConditionFailure(e)) throw e;
    }
    // Both window states refused: the account is gone, or (for a key) its owner changed. Off the usual path.
    if (owner && attempt % 2 === 1) {
      const { Item } = await db().send(new GetCommand({ TableName: tableName(), Key: accountKey(accountId), ConsistentRead: true }));
      if (!Item) return undefined;
      if (Number(Item[memberGenName(owner.userId)] ?? 0) !== owner.gen) return 'owner-changed';
    }
  }
  return undefined;
}

/** The members' current generations recorded on the account item (absent ones are 0). */
export async function memberGens(accountId: string): Promise<(userId: string) => number> {
  const { Item = {} } = await db().send(new GetCommand({ TableName: tableName(), Key: accountKey(accountId), ConsistentRead: true }));
  return (userId) => Number(Item[memberGenName(userId)] ?? 0);
}
