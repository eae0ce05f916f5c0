import { writeAll } from '../db/transact.ts';
import { changeMemberItem, removeMemberItem } from '../db/entities/member-writes.ts';
import { memberGenItems } from '../db/entities/rate-counter-copies.ts';
import { listApiKeys, restoreApiKey, revokeApiKey } from '../db/entities/api-key.ts';
import {
  addAdminItem,
  claimSlackItem,
  ensureAdminSet,
  getUser,
  isActiveAdmin,
  listUsers,
  publicUser,
  releaseSlackItem,
  removeAdminItem,
  type Role,
  type User,
} from '../db/entities/user.ts';
import { releaseEmailItems } from '../db/entities/user-email.ts';
import { lostRace, retryConflicts } from '../db/conflicts.ts';
import { conflict, isConditionFailure, notFound } from '../errors.ts';
import { assertSlackUserFree, createUser, slackUserTaken } from './accounts.ts';
import { audited } from '../db/audited.ts';
import type { Principal } from './principal.ts';
import { caches } from './records.ts';

type SessionPrincipal = Extract<Principal, { kind: 'session' }>;

export async function listMembers(p: SessionPrincipal) {
  const users = await listUsers(p.accountId);
  return { items: users.map(publicUser), nextCursor: null };
}

/** Admins add members (or further admins) to their own account. */
export async function createMember(p: SessionPrincipal, input: { email: string; password: string; role: Role; slackUserId?: string }) {
  const now = Date.now();
  const user = await createUser(p.accountId, input.email, input.password, input.role, now, input.slackUserId, (u) => [
    audited(p, 'member.added', { type: 'member', id: u.userId, name: u.email }, { role: u.role }, now),
  ]);
  return publicUser(user);
}

const memberNotFound = () => notFound('MEMBER_NOT_FOUND', 'No such member.');
const memberChanged = () => conflict('MEMBER_CHANGED', 'The member was changed concurrently; try again.');
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
 * leave one (409 `LAST_ADMIN` for the other).
 *
 * Disabling or enabling raises the member's membership generation, on the user item and on the
 * account item in the same transaction: every session and key made under the old one is refused from
 * that commit on, whatever runs concurrently (sessions compare it with the user they read; keys through
 * the rate-limit write on the account item, `countAccountRequest`). So a re-enable revives no session,
 * and no key unless `restoreKeys` asks for it: then the member's unrevoked keys are moved to the new
 * generation after the commit (never back to an older one), and a disable that commits meanwhile
 * raises it again, which suspends them with the rest: the last change wins for user and keys together.
 */
export async function updateMember(
  p: SessionPrincipal,
  userId: string,
  change: { role?: Role; disabled?: boolean; restoreKeys?: boolean; slackUserId?: string | null },
) {
  const { next, gen } = await retryConflicts(
    async () => {
      const user = await getUser(p.accountId, userId);
      if (!user) throw memberNotFound();
      const disabled = change.disabled ?? user.disabled ?? false;
      const gen = (user.gen ?? 0) + (disabled !== (user.disabled ?? false) ? 1 : 0);
      const { slackUserId: recorded, ...rest } = user;
      const slackUserId = change.slackUserId === undefined ? recorded : (change.slackUserId ?? undefined);
      const next: User = { ...rest, role: change.role ?? user.role, disabled, gen, ...(slackUserId ? { slackUserId } : {}) };
      const was = isActiveAdmin(user);
      const is = isActiveAdmin(next);
      if (was !== is) await ensureAdminSet(p.accountId);
      const newSlack = slackUserId !== recorded ? slackUserId : undefined;
      if (newSlack) await assertSlackUserFree(p.accountId, userId, newSlack);
      const items = [
        changeMemberItem(user, next),
        ...(was && !is ? [removeAdminItem(p.accountId, userId)] : []),
        ...(!was && is ? [addAdminItem(p.accountId, userId)] : []),
        // The account item's and its rate counters' copies of the generation (what key requests check).
        ...(gen !== (user.gen ?? 0) ? await memberGenItems(p.accountId, userId, gen) : []),
      ];
      const entry = memberChangeEntry(p, user, next, change.restoreKeys);
      // A new Slack id is claimed (another member's claim refuses it), the one it replaces given up.
      const claimAt = newSlack ? items.length : -1;
      const slackItems = [
        ...(newSlack ? [claimSlackItem(p.accountId, userId, newSlack)] : []),
        ...(recorded && slackUserId !== recorded ? [releaseSlackItem(p.accountId, userId, recorded)] : []),
      ];
      try {
        await writeAll([...items, ...slackItems, ...(entry ? [entry] : [])]);
      } catch (e) {
        // The set refused (last admin), or the claim (the Slack id is another member's); otherwise the
        // user changed since it was read: read again.
        if (isConditionFailure(e) && refusedItem(e) === 1 && was && !is) throw lastAdmin();
        if (isConditionFailure(e) && refusedItem(e) === claimAt) throw slackUserTaken();
        throw e;
      }
      return { next, gen };
    },
    {
      attempts: 4,
      retryOn: lostRace,
      exhausted: () => {
        throw memberChanged();
      },
    },
  );
  caches.users.delete(`${p.accountId}/${userId}`);
  if (!next.disabled && change.restoreKeys) await restoreKeys(p.accountId, userId, gen);
  return publicUser(next);
}

/**
 * The audit entry of a member's change: `member.disabled` / `member.enabled` when that changed (with the
 * role change, if any, in its details), else `member.updated` with what changed; none for no change.
 */
function memberChangeEntry(p: SessionPrincipal, user: User, next: User, restoreKeys?: boolean) {
  const details: Record<string, unknown> = {};
  if (next.role !== user.role) Object.assign(details, { roleFrom: user.role, roleTo: next.role });
  if ((next.slackUserId ?? null) !== (user.slackUserId ?? null)) details.changed = ['slackUserId'];
  const toggled = (next.disabled ?? false) !== (user.disabled ?? false);
  if (!toggled && Object.keys(details).length === 0) return undefined;
  const action = toggled ? (next.disabled ? 'member.disabled' : 'member.enabled') : 'member.updated';
  if (toggled && !next.disabled) details.restoreKeys = restoreKeys ?? false;
  return audited(p, action, { type: 'member', id: user.userId, name: user.email }, details);
}

/** Move every unrevoked key of the member to membership generation `gen` (each its own write). */
async function restoreKeys(accountId: string, userId: string, gen: number) {
  const keys = await listApiKeys(accountId, userId);
  await Promise.all(keys.filter((k) => k.revokedAt === undefined).map((k) => restoreApiKey(k.keyId, userId, gen)));
  for (const k of keys) caches.keys.delete(k.keyId);
}

/**
 * Remove a member (admins): the user and their email claim go in one transaction (with the admin
 * set, which refuses to lose the last admin, and a raised membership generation on the account item),
 * so their sessions (the user is gone) and keys (the generation) fail from that commit on, including
 * a key whose creation raced it. Then every key they own is marked revoked, for the listing;
 * workflows, webhooks and runs they made stay with the account.
 */
export async function removeMember(p: SessionPrincipal, userId: string, now = Date.now()): Promise<void> {
  await retryConflicts(
    async () => {
      const user = await getUser(p.accountId, userId);
      if (!user) throw memberNotFound();
      const admin = isActiveAdmin(user);
      if (admin) await ensureAdminSet(p.accountId);
      const before = [removeMemberItem(user), ...(await releaseEmailItems(user))];
      try {
        await writeAll([
          ...before,
          ...(admin ? [removeAdminItem(p.accountId, userId)] : []),
          ...(await memberGenItems(p.accountId, userId, (user.gen ?? 0) + 1)),
          ...(user.slackUserId ? [releaseSlackItem(p.accountId, userId, user.slackUserId)] : []),
          audited(p, 'member.removed', { type: 'member', id: userId, name: user.email }, { role: user.role }, now),
        ]);
      } catch (e) {
        // The item after the user's and their email's is the admin set only when an admin is removed.
        if (isConditionFailure(e) && admin && refusedItem(e) === before.length) throw lastAdmin();
        throw e;
      }
    },
    {
      attempts: 4,
      retryOn: lostRace,
      exhausted: () => {
        throw memberChanged();
      },
    },
  );
  caches.users.delete(`${p.accountId}/${userId}`);
  const keys = await listApiKeys(p.accountId, userId);
  await Promise.all(keys.map((k) => revokeApiKey(k.keyId, now)));
  for (const k of keys) caches.keys.delete(k.keyId);
}

/** The caller's own profile: their Slack user id (null removes it); the same checks as an admin's change. */
export async function updateProfile(p: SessionPrincipal, change: { slackUserId: string | null }) {
  return updateMember(p, p.userId, { slackUserId: change.slackUserId });
}

/** One member of the caller's account (another account's is not found). */
export async function memberFor(p: SessionPrincipal, userId: string) {
  const user = await getUser(p.accountId, userId);
  if (!user) throw memberNotFound();
  return publicUser(user);
}
