import { TransactWriteCommand, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '../clients.ts';
import type { Plan } from '../config.ts';
import { accountItem, type Account } from '../db/entities/account.ts';
import { addAdminItem, adminsKey, createUserItems, ensureAdminSet, type Role, type User } from '../db/entities/user.ts';
import { conflict, isConditionFailure } from '../errors.ts';
import { newId } from '../ids.ts';
import { hashPassword } from '../passwords.ts';

/** Create an account and its first admin in one transaction (operator CLI, demo seed). */
export async function createAccount(input: { name: string; plan: Plan; email: string; password: string }, now = Date.now()) {
  const account: Account = { accountId: newId('acc'), name: input.name, plan: input.plan, createdAt: now };
  const admin = await newUser(account.accountId, input.email, input.password, 'admin', now);
  await transact([
    { Put: { TableName: tableName(), Item: accountItem(account), ConditionExpression: 'attribute_not_exists(PK)' } },
    ...createUserItems(admin),
    { Put: { TableName: tableName(), Item: { ...adminsKey(account.accountId), type: 'admins', admins: new Set([admin.userId]) } } },
  ]);
  return { account, admin };
}

/** Create a user in an existing account; the email must be unused across the service. */
export async function createUser(accountId: string, email: string, password: string, role: Role, now = Date.now()) {
  const user = await newUser(accountId, email, password, role, now);
  if (role === 'admin') await ensureAdminSet(accountId);
  await transact([...createUserItems(user), ...(role === 'admin' ? [addAdminItem(accountId, user.userId)] : [])]);
  return user;
}

async function newUser(accountId: string, email: string, password: string, role: Role, now: number): Promise<User> {
  return { userId: newId('usr'), accountId, email: email.toLowerCase(), role, passwordHash: await hashPassword(password), createdAt: now };
}

async function transact(TransactItems: TransactWriteCommandInput['TransactItems']) {
  try {
    await db().send(new TransactWriteCommand({ TransactItems }));
  } catch (e) {
    if (isConditionFailure(e)) throw conflict('EMAIL_TAKEN', 'A user with this email already exists.');
    throw e;
  }
}
