import { writeAll } from '../db/transact.ts';
import { audited, auditEntry } from '../db/audited.ts';
import { auditPut } from '../db/entities/audit.ts';
import { lostRace, retryConflicts } from '../db/conflicts.ts';
import { authFailSubject, clearTwoWindows, takeFromTwoWindows } from '../db/entities/counter.ts';
import { deleteSessionItem, keepSessionItem } from '../db/entities/session.ts';
import { endSessionsItem, getUser, type User } from '../db/entities/user.ts';
import { conflict, isConditionFailure, rateLimited, unauthorized, validationFailed } from '../errors.ts';
import { logger } from '../logger.ts';
import { hashPassword, verifyPassword } from '../passwords.ts';
import type { Principal } from './principal.ts';

// Ending a member's sessions: a password change ends every other one, "sign out everywhere" all of
// them. Both raise the user's session epoch (user.ts `sessionEpoch`) in one write, and a session works
// only while the epoch it was made under is current (sessions.ts): O(1), whatever the number of sessions.

type SessionPrincipal = Extract<Principal, { kind: 'session' }>;

/**
 * Wrong guesses at the current password allowed per user under "Change password", in a sliding
 * window (counter.ts). An attempt is reserved before the password is checked, so concurrent guesses
 * cannot pass the limit; a right one resets the count. Over it: 429 with `Retry-After`, the password
 * not checked.
 */
export const PASSWORD_CHECK_LIMITS = { windowSeconds: 900, perUser: 5 } as const;

const invalidSession = () => unauthorized('INVALID_SESSION', 'The session is invalid or expired; log in again.');
const userObject = (user: User) => ({ type: 'user', id: user.userId, name: user.email });

/**
 * Change the caller's own password: the current one must be right (400 `VALIDATION_FAILED` at
 * `currentPassword` otherwise, audited as `password.change_failed`: a session alone does not change
 * it, and guessing is limited: `PASSWORD_CHECK_LIMITS`). The hash is replaced on the condition that it
 * is the one checked, so a concurrent change makes this one fail rather than both pass; in the same
 * transaction the session epoch is raised, ending every other session of the user (console and API),
 * and this session is moved to the new epoch: it goes on working.
 */
export async function changePassword(p: SessionPrincipal, input: { currentPassword: string; newPassword: string }, now = Date.now()) {
  const guesses = authFailSubject('PASSWORD', p.userId);
  const { windowSeconds, perUser } = PASSWORD_CHECK_LIMITS;
  const [user, reserved] = await Promise.all([
    getUser(p.accountId, p.userId, true),
    takeFromTwoWindows(guesses, perUser, windowSeconds, now),
  ]);
  if (!user) throw invalidSession();
  if (!reserved.allowed) throw rateLimited(reserved.retryAfter, {});
  if (!(await verifyPassword(input.currentPassword, user.passwordHash))) {
    await wrongCurrentPassword(p, user, now);
    throw validationFailed([{ path: 'currentPassword', message: 'is not your current password' }]);
  }
  const newHash = await hashPassword(input.newPassword);
  try {
    await writeAll([
      endSessionsItem(user, newHash),
      keepSessionItem(p.sessionId, (user.sessionEpoch ?? 0) + 1),
      audited(p, 'password.changed', userObject(user), { otherSessionsEnded: true }, now),
    ]);
  } catch (e) {
    if (isConditionFailure(e)) throw validationFailed([{ path: 'currentPassword', message: 'was changed meanwhile; sign in again' }]);
    throw e;
  }
  await clearTwoWindows(guesses, windowSeconds, now);
}

/** A wrong current password: its audit entry alone (best effort: the refusal stands without it). */
async function wrongCurrentPassword(p: SessionPrincipal, user: User, now: number) {
  const entry = auditEntry(p, 'password.change_failed', userObject(user), { reason: 'wrong_current_password' }, now);
  await writeAll([auditPut(entry)]).catch((error: unknown) =>
    logger.warn('failed password change not audited', { userId: user.userId, error: error as Error }),
  );
}

/**
 * Sign out everywhere: every session of the caller ends, this one included (console cookies and API
 * sessions alike; API keys are not sessions and stay), in one transaction with its audit entry
 * `session.signed_out_everywhere`. A concurrent change of the user is read again and tried again.
 */
export async function signOutEverywhere(p: SessionPrincipal, now = Date.now()): Promise<void> {
  await retryConflicts(
    async () => {
      const user = await getUser(p.accountId, p.userId, true);
      if (!user) throw invalidSession();
      await writeAll([
        endSessionsItem(user),
        deleteSessionItem(p.sessionId),
        audited(p, 'session.signed_out_everywhere', { type: 'member', id: user.userId, name: user.email }, {}, now),
      ]);
    },
    {
      retryOn: lostRace,
      exhausted: () => {
        throw conflict('CONFLICT', 'Your member record kept changing; try again.');
      },
    },
  );
}
