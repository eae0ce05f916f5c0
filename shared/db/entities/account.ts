import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import { Plan } from '../../config.ts';
import { db, tableName } from '../../clients.ts';
import { notFound, isConditionFailure } from '../../errors.ts';
import { accountKey, counterKey, existing, type Layout, layoutOf, newAccountItems, planCounters, range, reshard } from './rate-counters.ts';
import type { TransactItem } from '../transact.ts';
import { memberGenName } from './user.ts';

// Access patterns: get by id; the account's request count in the current rate-limit window lives on
// the same item (rateWindow, rateCount), so one write meters a request and returns the plan; above
// COUNTER_RATE requests a second the window is spread over counters of their own (rate-counters.ts).
export const Account = z.object({ accountId: z.string(), name: z.string(), plan: Plan, createdAt: z.number() });
export type Account = z.infer<typeof Account>;

export { accountKey, countAccountRequest, type KeyOwner } from './rate-counters.ts';

/** The item to put (inside the transaction that also creates the first admin). */
export const accountItem = (a: Account) => ({ ...accountKey(a.accountId), type: 'account', ...a, ...newAccountItems(a).layout });

/** The counters to put with a new account whose plan needs more than one (none otherwise). */
export const accountCounterItems = (a: Account) => newAccountItems(a).counters;

/** Transaction items of a new account: its item (refused if the id exists) and its rate counters. */
export const newAccountPuts = (a: Account): TransactItem[] => [
  { Put: { TableName: tableName(), Item: accountItem(a), ConditionExpression: 'attribute_not_exists(PK)' } },
  ...accountCounterItems(a).map((Item) => ({ Put: { TableName: tableName(), Item } })),
];

export async function getAccount(accountId: string): Promise<Account | undefined> {
  const { Item } = await db().send(new GetCommand({ TableName: tableName(), Key: accountKey(accountId) }));
  return Item ? Account.parse(Item) : undefined;
}

/**
 * Change an account's plan: the next metered request of the account meters against it (no cache). The
 * plan is copied onto the account's rate counters before this returns; when the new plan's limit needs
 * another number of counters, they change from the next rate window on (`reshard`).
 */
export async function setPlan(accountId: string, plan: Plan): Promise<Account> {
  let Attributes: Record<string, unknown> | undefined;
  try {
    ({ Attributes } = await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: accountKey(accountId),
        UpdateExpression: 'SET #plan = :plan ADD copiesVersion :one',
        ConditionExpression: 'attribute_exists(PK)',
        ExpressionAttributeNames: { '#plan': 'plan' },
        ExpressionAttributeValues: { ':plan': plan, ':one': 1 },
        ReturnValues: 'ALL_NEW',
      }),
    ));
  } catch (e) {
    if (isConditionFailure(e)) throw notFound('ACCOUNT_NOT_FOUND', `Account ${accountId} does not exist.`);
    throw e;
  }
  const layout = layoutOf(Attributes ?? {});
  await copyPlan(accountId, plan, layout);
  if ((layout.next ?? layout.n) !== planCounters(plan)) await reshard(accountId);
  return Account.parse(Attributes);
}

/** Copy a new plan onto the counters 1..existing-1 of `layout` (after the account item's write). */
async function copyPlan(accountId: string, plan: Plan, layout: Layout): Promise<void> {
  await Promise.all(
    range(1, existing(layout)).map((j) =>
      db().send(
        new UpdateCommand({
          TableName: tableName(),
          Key: counterKey(accountId, j),
          UpdateExpression: 'SET #plan = :plan',
          ConditionExpression: 'attribute_exists(PK)',
          ExpressionAttributeNames: { '#plan': 'plan' },
          ExpressionAttributeValues: { ':plan': plan },
        }),
      ),
    ),
  );
}

/** The members' current generations recorded on the account item (absent ones are 0). */
export async function memberGens(accountId: string): Promise<(userId: string) => number> {
  const { Item = {} } = await db().send(new GetCommand({ TableName: tableName(), Key: accountKey(accountId), ConsistentRead: true }));
  return (userId) => Number(Item[memberGenName(userId)] ?? 0);
}
