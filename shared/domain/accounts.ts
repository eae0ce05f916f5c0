import { writeAll } from '../db/transact.ts';
import type { Plan } from '../config.ts';
import { type Account, newAccountPuts } from '../db/entities/account.ts';
import { addAdminItem, newAdminSetItem, claimSlackItem, ensureAdminSet, listUsers, type Role, type User } from '../db/entities/user.ts';
import { claimEmail, createUserItems, releaseEmail } from '../db/entities/user-email.ts';
import { conflict, isConditionFailure } from '../errors.ts';
import { newId } from '../ids.ts';
import { hashPassword } from '../passwords.ts';
import type { TransactItem } from '../db/transact.ts';
import { audited, type Via } from '../db/audited.ts';

/**
 * Create an account and its first admin in one transaction (operator CLI, demo seed). `by`: who asks,
 * for the new account's audit log (the CLI: the operator); none, no entry.
 */
export async function createAccount(
  input: { name: string; plan: Plan; email: string; password: string },
  now = Date.now(),
  by?: { kind: 'operator'; via?: Via },
) {
  const account: Account = { accountId: newId('acc'), name: input.name, plan: input.plan, createdAt: now };
  const admin = await newUser(account.accountId, input.email, input.password, 'admin', now);
  await transact([
    // A plan whose limit is above one counter's rate: its counters, from the first request on.
    ...newAccountPuts(account),
    ...createUserItems(admin),
    newAdminSetItem(account.accountId, admin.userId),
    ...(by
      ? [
          audited(
            { ...by, accountId: account.accountId },
            'member.added',
            { type: 'member', id: admin.userId, name: admin.email },
            { role: 'admin' },
            now,
          ),
        ]
      : []),
  ]);
  return { account, admin };
}

/**
 * Create a user in an existing account; the email must be unused in the account (other accounts'
 * members do not matter: an email may be a member of several), a Slack user id too. The email is
 * claimed before the password is hashed, so a taken one is refused at once, and of many creations of
 * one email at once only one does the hash's work; the claim is given up when the creation fails.
 */
export async function createUser(
  accountId: string,
  email: string,
  password: string,
  role: Role,
  now = Date.now(),
  slackUserId?: string,
  /** Further items of the same transaction (the audit entry), given the new user. */
  extra: (u: User) => TransactItem[] = () => [],
) {
  const userId = newId('usr');
  const lower = email.toLowerCase();
  if (!(await claimEmail(accountId, lower, userId, now))) throw emailTaken();
  try {
    if (role === 'admin') await ensureAdminSet(accountId);
    if (slackUserId) await assertSlackUserFree(accountId, userId, slackUserId);
    const passwordHash = await hashPassword(password);
    const user: User = { userId, accountId, email: lower, role, passwordHash, createdAt: now, ...(slackUserId ? { slackUserId } : {}) };
    const items = [...createUserItems(user, true), ...(role === 'admin' ? [addAdminItem(accountId, userId)] : [])];
    await transact([...items, ...(slackUserId ? [claimSlackItem(accountId, userId, slackUserId)] : []), ...extra(user)], items.length);
    return user;
  } catch (e) {
    await releaseEmail(accountId, lower, userId);
    throw e;
  }
}

const emailTaken = () => conflict('EMAIL_TAKEN', 'A member of this account has this email.');

async function newUser(accountId: string, email: string, password: string, role: Role, now: number): Promise<User> {
  return { userId: newId('usr'), accountId, email: email.toLowerCase(), role, passwordHash: await hashPassword(password), createdAt: now };
}

export const slackUserTaken = () =>
  conflict('SLACK_USER_TAKEN', 'Another member of the account has this Slack user id; remove it from them first.');

/**
 * Refuse a Slack user id another member records. The claim item (`claimSlackItem`) decides races;
 * this also covers members who recorded theirs before claims existed (they have none).
 */
export async function assertSlackUserFree(accountId: string, userId: string, slackUserId: string): Promise<void> {
  const holders = (await listUsers(accountId)).filter((u) => u.slackUserId === slackUserId && u.userId !== userId);
  if (holders.length) throw slackUserTaken();
}

/** Write the items; a refusal of the item at `slackClaim` (when given) is a Slack id taken, any other an email taken. */
async function transact(items: TransactItem[], slackClaim?: number) {
  try {
    await writeAll(items);
  } catch (e) {
    if (isConditionFailure(e)) {
      const reasons = (e as { CancellationReasons?: { Code?: string }[] }).CancellationReasons ?? [];
      if (slackClaim !== undefined && reasons.findIndex((r) => r.Code === 'ConditionalCheckFailed') === slackClaim) throw slackUserTaken();
      throw emailTaken();
    }
    throw e;
  }
}
