import { TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '../clients.ts';
import { listApiKeys, revokeApiKey, setKeySuspended } from '../db/entities/api-key.ts';
import {
  addAdminItem,
  emailKey,
  ensureAdminSet,
  getUser,
  isActiveAdmin,
  listUsers,
  publicUser,
  removeAdminItem,
  userKey,
  type Role,
  type User,
} from '../db/entities/user.ts';
import { conflict, isConditionFailure, notFound } from '../errors.ts';
import { createUser } from './accounts.ts';
import type { Principal } from './principal.ts';
import { caches } from './records.ts';

type SessionPrincipal = Extract<Principal, { kind: 'session' }>;

export async function listMembers(p: SessionPrincipal) {
  const users = await listUsers(p.accountId);
  return { items: users.map(publicUser), nextCursor: null };
}

/** Admins add members (or further admins) to their own account. */
export async function createMember(p: SessionPrincipal, input: { email: string; password: string; role: Role }) {
  return publicUser(await createUser(p.accountId, input.email, input.password, input.role));
}

const memberNotFound = () => notFound('MEMBER_NOT_FOUND', 'No such member.');
const lastAdmin = () => conflict('LAST_ADMIN', 'The account must keep at least one enabled admin: promote or enable another admin first.');

/** Which item of a cancelled transaction refused it (index of the first ConditionalCheckFailed). */
function refusedItem(e: unknown): number {
  const reasons = (e as { CancellationReasons?: { Code?: string }[] }).CancellationReasons ?? [];
  return reasons.findIndex((r) => r.Code === 'ConditionalCheckFailed');
}

/**
 * Change a member's role or disable/enable them (admins). The user item is written on the condition
 * that it is as read, together with the account's admin set when the member stops or starts being an
 * enabled admin; the set refuses to lose its last entry, so two admins demoting each other at once
 * leave one (409 `LAST_ADMIN` for the other). Then the member's API keys follow: suspended while the
 * member is disabled. Sessions need nothing: every console request reads the user.
 */
export async function updateMember(p: SessionPrincipal, userId: string, change: { role?: Role; disabled?: boolean }) {
  for (let attempt = 0; ; attempt++) {
    const user = await getUser(p.accountId, userId);
    if (!user) throw memberNotFound();
    const next: User = { ...user, role: change.role ?? user.role, disabled: change.disabled ?? user.disabled ?? false };
    const was = isActiveAdmin(user);
    const is = isActiveAdmin(next);
    if (was !== is) await ensureAdminSet(p.accountId);
    const items = [
      {
        Update: {
          TableName: tableName(),
          Key: userKey(p.accountId, userId),
          UpdateExpression: 'SET #role = :role, disabled = :disabled',
          ConditionExpression: `#role = :oldRole AND ${user.disabled ? 'disabled = :true' : '(attribute_not_exists(disabled) OR disabled = :false)'}`,
          ExpressionAttributeNames: { '#role': 'role' },
          ExpressionAttributeValues: {
            ':role': next.role,
            ':disabled': next.disabled,
            ':oldRole': user.role,
            ...(user.disabled ? { ':true': true } : { ':false': false }),
          },
        },
      },
      ...(was && !is ? [removeAdminItem(p.accountId, userId)] : []),
      ...(!was && is ? [addAdminItem(p.accountId, userId)] : []),
    ];
    try {
      await db().send(new TransactWriteCommand({ TransactItems: items }));
    } catch (e) {
      if (!isConditionFailure(e)) throw e;
      // The set refused (last admin), or the user changed since it was read: read again.
      if (refusedItem(e) === 1 && was && !is) throw lastAdmin();
      if (attempt >= 3) throw conflict('MEMBER_CHANGED', 'The member was changed concurrently; try again.');
      continue;
    }
    caches.users.delete(`${p.accountId}/${userId}`);
    await syncKeys(p.accountId, userId, next.disabled === true);
    return publicUser(next);
  }
}

/** Suspend or reinstate every key the member owns (each its own write; revoked keys stay revoked). */
async function syncKeys(accountId: string, userId: string, suspended: boolean) {
  const keys = await listApiKeys(accountId, userId);
  await Promise.all(keys.map((k) => setKeySuspended(k.keyId, suspended)));
  for (const k of keys) caches.keys.delete(k.keyId);
}

/**
 * Remove a member (admins): the user and their email claim go in one transaction (with the admin
 * set, which refuses to lose the last admin), then every key they own is revoked. Their sessions
 * fail at once (the user is gone); workflows, webhooks and runs they made stay with the account.
 */
export async function removeMember(p: SessionPrincipal, userId: string, now = Date.now()): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    const user = await getUser(p.accountId, userId);
    if (!user) throw memberNotFound();
    const admin = isActiveAdmin(user);
    if (admin) await ensureAdminSet(p.accountId);
    try {
      await db().send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Delete: {
                TableName: tableName(),
                Key: userKey(p.accountId, userId),
                ConditionExpression: `#role = :role AND ${user.disabled ? 'disabled = :true' : '(attribute_not_exists(disabled) OR disabled = :false)'}`,
                ExpressionAttributeNames: { '#role': 'role' },
                ExpressionAttributeValues: { ':role': user.role, ...(user.disabled ? { ':true': true } : { ':false': false }) },
              },
            },
            { Delete: { TableName: tableName(), Key: emailKey(user.email) } },
            ...(admin ? [removeAdminItem(p.accountId, userId)] : []),
          ],
        }),
      );
    } catch (e) {
      if (!isConditionFailure(e)) throw e;
      if (refusedItem(e) === 2) throw lastAdmin();
      if (attempt >= 3) throw conflict('MEMBER_CHANGED', 'The member was changed concurrently; try again.');
      continue;
    }
    caches.users.delete(`${p.accountId}/${userId}`);
    const keys = await listApiKeys(p.accountId, userId);
    await Promise.all(keys.map((k) => revokeApiKey(k.keyId, now)));
    for (const k of keys) caches.keys.delete(k.keyId);
    return;
  }
}
