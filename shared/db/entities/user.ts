import { GetCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import { db, tableName } from '../../clients.ts';
import { queryAll } from '../query.ts';

// Access patterns: get by account + id · list by account (PK, SK begins_with USER#) ·
// get by email (global lookup item EMAIL#<email>, also what keeps emails unique).
export const Role = z.enum(['admin', 'member']);
export type Role = z.infer<typeof Role>;

export const User = z.object({
  userId: z.string(),
  accountId: z.string(),
  email: z.string(),
  role: Role,
  passwordHash: z.string(),
  createdAt: z.number(),
});
export type User = z.infer<typeof User>;

/** What leaves the service about a user: never the password hash. */
export const publicUser = (u: User) => ({ id: u.userId, email: u.email, role: u.role, createdAt: u.createdAt });

export const userKey = (accountId: string, userId: string) => ({ PK: `ACC#${accountId}`, SK: `USER#${userId}` });
const emailKey = (email: string) => ({ PK: `EMAIL#${email.toLowerCase()}`, SK: 'EMAIL' });

/** Transaction items that create a user and claim its email (fails if the email is taken). */
export function createUserItems(u: User) {
  return [
    {
      Put: {
        TableName: tableName(),
        Item: { ...userKey(u.accountId, u.userId), type: 'user', ...u, email: u.email.toLowerCase() },
        ConditionExpression: 'attribute_not_exists(PK)',
      },
    },
    {
      Put: {
        TableName: tableName(),
        Item: { ...emailKey(u.email), type: 'email', accountId: u.accountId, userId: u.userId },
        ConditionExpression: 'attribute_not_exists(PK)',
      },
    },
  ];
}

export async function getUser(accountId: string, userId: string): Promise<User | undefined> {
  const { Item } = await db().send(new GetCommand({ TableName: tableName(), Key: userKey(accountId, userId) }));
  return Item ? User.parse(Item) : undefined;
}

export async function getUserByEmail(email: string): Promise<User | undefined> {
  const { Item } = await db().send(new GetCommand({ TableName: tableName(), Key: emailKey(email) }));
  return Item ? getUser(Item.accountId, Item.userId) : undefined;
}

export const listUsers = (accountId: string): Promise<User[]> =>
  queryAll(
    {
      KeyConditionExpression: 'PK = :pk AND begins_with(SK, :sk)',
      ExpressionAttributeValues: { ':pk': `ACC#${accountId}`, ':sk': 'USER#' },
    },
    (i) => User.parse(i),
  );
