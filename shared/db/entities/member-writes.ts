import { tableName } from '../../clients.ts';
import type { TransactItem } from '../transact.ts';
import { genCondition, type User, userKey } from './user.ts';

// A member's changes by an admin (shared/domain/members.ts): each write is conditional on the user
// item as the admin read it, so a change made meanwhile refuses it (and it is read again).

/** The user item's condition: role, disabled state, membership generation and Slack user id as read. */
const asRead = (user: User) => ({
  expression: `#role = :oldRole AND ${user.disabled ? 'disabled = :true' : '(attribute_not_exists(disabled) OR disabled = :false)'} AND ${genCondition(user.gen ?? 0)} AND ${user.slackUserId ? 'slackUserId = :oldSlack' : 'attribute_not_exists(slackUserId)'}`,
  names: { '#role': 'role', '#gen': 'gen' },
  values: {
    ':oldRole': user.role,
    ':gen': user.gen ?? 0,
    ...(user.disabled ? { ':true': true } : { ':false': false }),
    ...(user.slackUserId ? { ':oldSlack': user.slackUserId } : {}),
  },
});

/** Transaction item: the user `user` (as read) becomes `next` (role, disabled, generation, Slack user id). */
export function changeMemberItem(user: User, next: User): TransactItem {
  const cond = asRead(user);
  return {
    Update: {
      TableName: tableName(),
      Key: userKey(user.accountId, user.userId),
      UpdateExpression: `SET #role = :role, disabled = :disabled, #gen = :newGen${next.slackUserId ? ', slackUserId = :slack' : ' REMOVE slackUserId'}`,
      ConditionExpression: cond.expression,
      ExpressionAttributeNames: cond.names,
      ExpressionAttributeValues: {
        ...cond.values,
        ':role': next.role,
        ':disabled': next.disabled ?? false,
        ':newGen': next.gen ?? 0,
        ...(next.slackUserId ? { ':slack': next.slackUserId } : {}),
      },
    },
  };
}

/** Transaction item: delete the user `user`, as read. */
export function removeMemberItem(user: User): TransactItem {
  const cond = asRead(user);
  return {
    Delete: {
      TableName: tableName(),
      Key: userKey(user.accountId, user.userId),
      ConditionExpression: cond.expression,
      ExpressionAttributeNames: cond.names,
      ExpressionAttributeValues: cond.values,
    },
  };
}
