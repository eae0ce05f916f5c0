import { type TransactItem, writeWith } from '../transact.ts';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import { db, tableName } from '../../clients.ts';
import { isConditionFailure } from '../../errors.ts';
import { queryAll } from '../query.ts';

// Access patterns: get by account + id · list by account (PK, SK begins_with USER#) ·
// the members an email signs in as (user-email.ts) · the account's
// active admins (ACC#<account> / ADMINS: a string set of the enabled admins' ids, written in the same
// transaction as every change that adds or removes one, so the last admin can never be lost) ·
// the holder of a Slack user id in an account (ACC#<account> / SLACK#<id>, also what keeps them unique).
export const Role = z.enum(['admin', 'member']);
export type Role = z.infer<typeof Role>;

export const User = z.object({
  userId: z.string(),
  accountId: z.string(),
  email: z.string(),
  role: Role,
  passwordHash: z.string(),
  createdAt: z.number(),
  /** A disabled member cannot log in; their sessions and API keys are refused. */
  disabled: z.boolean().optional(),
  /**
   * Membership generation: raised by every disable and removal (members.ts), in the same transaction
   * as the account item's copy (`memberGenName`). A session or key carries the generation it was made
   * under and works only while it is current, so a disable ends them all at once and a re-enable
   * brings none back by itself. Absent (older users) is 0.
   */
  gen: z.number().optional(),
  /**
   * Session epoch: raised by a password change and by "sign out everywhere" (sessions.ts). A session
   * carries the epoch it was made under (session.ts `userEpoch`) and works only while it is current,
   * so one write ends every session of the user, with no scan. Unlike `gen` it leaves API keys alone.
   * Absent (older users) is 0.
   */
  sessionEpoch: z.number().optional(),
  /** Their Slack user id (U…): Slack approval messages reach them, and their Slack clicks are theirs. */
  slackUserId: z.string().optional(),
});
export type User = z.infer<typeof User>;

/** What leaves the service about a user: never the password hash. */
export const publicUser = (u: User) => ({
  id: u.userId,
  email: u.email,
  role: u.role,
  disabled: u.disabled ?? false,
  createdAt: u.createdAt,
  ...(u.slackUserId ? { slackUserId: u.slackUserId } : {}),
});

/** An admin who is not disabled: what the ADMINS set holds. */
export const isActiveAdmin = (u: Pick<User, 'role' | 'disabled'>) => u.role === 'admin' && !u.disabled;

export const userKey = (accountId: string, userId: string) => ({ PK: `ACC#${accountId}`, SK: `USER#${userId}` });
/**
 * The account item's attribute holding a member's current generation: the key check rides on the
 * rate-limit write every key-authenticated request makes to the account item anyway
 * (`countAccountRequest`), so no extra read. Absent is 0.
 */
export const memberGenName = (userId: string) => `memberGen#${userId}`;

/** Condition that attribute `#gen` holds generation `:gen` (`gen`; absent counts as 0). */
export const genCondition = (gen: number) => (gen === 0 ? '(attribute_not_exists(#gen) OR #gen = :gen)' : '#gen = :gen');

export const adminsKey = (accountId: string) => ({ PK: `ACC#${accountId}`, SK: 'ADMINS' });

/**
 * A Slack user id's claim in an account (ACC#<account> / SLACK#<id>, `userId` its holder): written in
 * the same transaction as the user item that records the id, on the condition that no other member
 * holds it, so two members never record the same id, even at once.
 */
export const slackClaimKey = (accountId: string, slackUserId: string) => ({ PK: `ACC#${accountId}`, SK: `SLACK#${slackUserId}` });

/** Transaction item: claim `slackUserId` for `userId` (refused when another member holds it). */
export const claimSlackItem = (accountId: string, userId: string, slackUserId: string) => ({
  Put: {
    TableName: tableName(),
    Item: { ...slackClaimKey(accountId, slackUserId), type: 'slackUser', accountId, userId, slackUserId },
    ConditionExpression: 'attribute_not_exists(PK) OR userId = :uid',
    ExpressionAttributeValues: { ':uid': userId },
  },
});

/** Transaction item: give up `userId`'s claim of `slackUserId` (never another member's). */
export const releaseSlackItem = (accountId: string, userId: string, slackUserId: string) => ({
  Delete: {
    TableName: tableName(),
    Key: slackClaimKey(accountId, slackUserId),
    ConditionExpression: 'attribute_not_exists(PK) OR userId = :uid',
    ExpressionAttributeValues: { ':uid': userId },
  },
});

/** The account's set of active admins; undefined for an account created before the set existed. */
export async function getAdminSet(accountId: string): Promise<string[] | undefined> {
  const { Item } = await db().send(new GetCommand({ TableName: tableName(), Key: adminsKey(accountId), ConsistentRead: true }));
  return Item ? [...((Item.admins as Set<string> | undefined) ?? [])] : undefined;
}

/** Transaction item: a new account's admin set, holding its first admin. */
export const newAdminSetItem = (accountId: string, userId: string): TransactItem => ({
  Put: { TableName: tableName(), Item: { ...adminsKey(accountId), type: 'admins', admins: new Set([userId]) } },
});

/** Transaction item: add an admin to the set (which must exist). */
export const addAdminItem = (accountId: string, userId: string) => ({
  Update: {
    TableName: tableName(),
    Key: adminsKey(accountId),
    UpdateExpression: 'ADD admins :id',
    ConditionExpression: 'attribute_exists(PK)',
    ExpressionAttributeValues: { ':id': new Set([userId]) },
  },
});

/** Transaction item: remove an admin from the set, refused when it is the only one left. */
export const removeAdminItem = (accountId: string, userId: string) => ({
  Update: {
    TableName: tableName(),
    Key: adminsKey(accountId),
    UpdateExpression: 'DELETE admins :id',
    ConditionExpression: 'contains(admins, :uid) AND size(admins) > :one',
    ExpressionAttributeValues: { ':id': new Set([userId]), ':uid': userId, ':one': 1 },
  },
});

/**
 * Create the admin set of an account that predates it, from its users (a no-op when it exists). Every
 * later change of an admin goes through a transaction that needs the set, so one built here from a
 * slightly stale listing is corrected by the change that raced it (which then fails and is retried).
 */
export async function ensureAdminSet(accountId: string): Promise<void> {
  if (await getAdminSet(accountId)) return;
  const admins = (await listUsers(accountId)).filter(isActiveAdmin).map((u) => u.userId);
  try {
    await db().send(
      new PutCommand({
        TableName: tableName(),
        Item: { ...adminsKey(accountId), type: 'admins', ...(admins.length ? { admins: new Set(admins) } : {}) },
        ConditionExpression: 'attribute_not_exists(PK)',
      }),
    );
  } catch (e) {
    if (!isConditionFailure(e)) throw e;
  }
}

export async function getUser(accountId: string, userId: string, consistent = false): Promise<User | undefined> {
  const { Item } = await db().send(new GetCommand({ TableName: tableName(), Key: userKey(accountId, userId), ConsistentRead: consistent }));
  return Item ? User.parse(Item) : undefined;
}

export const listUsers = (accountId: string): Promise<User[]> =>
  queryAll(
    {
      KeyConditionExpression: 'PK = :pk AND begins_with(SK, :sk)',
      ExpressionAttributeValues: { ':pk': `ACC#${accountId}`, ':sk': 'USER#' },
    },
    (i) => User.parse(i),
  );

/** Replace a user's password hash, on the condition that it is still the one read. */
export async function setPasswordHash(
  u: Pick<User, 'accountId' | 'userId' | 'passwordHash'>,
  passwordHash: string,
  extra: readonly TransactItem[] = [],
): Promise<void> {
  await writeWith(
    {
      Update: {
        TableName: tableName(),
        Key: userKey(u.accountId, u.userId),
        UpdateExpression: 'SET passwordHash = :new',
        ConditionExpression: 'passwordHash = :old',
        ExpressionAttributeValues: { ':new': passwordHash, ':old': u.passwordHash },
      },
    },
    extra,
  );
}

/** Condition that `#epoch` holds session epoch `epoch` (absent counts as 0). */
const epochCondition = (epoch: number) => (epoch === 0 ? '(attribute_not_exists(#epoch) OR #epoch = :epoch)' : '#epoch = :epoch');

/**
 * Transaction item: raise the user's session epoch from `u.sessionEpoch` (as read) to the next one,
 * and replace the password hash when `passwordHash` is given (on the condition that the hash is still
 * the one read). Refused when either changed since the read.
 */
export function endSessionsItem(
  u: Pick<User, 'accountId' | 'userId' | 'passwordHash' | 'sessionEpoch'>,
  passwordHash?: string,
): TransactItem {
  const epoch = u.sessionEpoch ?? 0;
  return {
    Update: {
      TableName: tableName(),
      Key: userKey(u.accountId, u.userId),
      UpdateExpression: `SET #epoch = :next${passwordHash ? ', passwordHash = :new' : ''}`,
      ConditionExpression: `attribute_exists(PK) AND ${epochCondition(epoch)}${passwordHash ? ' AND passwordHash = :old' : ''}`,
      ExpressionAttributeNames: { '#epoch': 'sessionEpoch' },
      ExpressionAttributeValues: {
        ':epoch': epoch,
        ':next': epoch + 1,
        ...(passwordHash ? { ':new': passwordHash, ':old': u.passwordHash } : {}),
      },
    },
  };
}
