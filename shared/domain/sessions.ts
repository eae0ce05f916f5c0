import { TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { db } from '../clients.ts';
import { deleteSession, getSession, putSession } from '../db/entities/session.ts';
import { getUser, getUserByEmail, setPasswordHash, type User } from '../db/entities/user.ts';
import { getAccount } from '../db/entities/account.ts';
import { clearWindow, giveBack, takeFromWindow } from '../db/entities/counter.ts';
import { config } from '../config.ts';
import { forbidden, isConditionFailure, rateLimited, unauthorized, validationFailed } from '../errors.ts';
import { logger } from '../logger.ts';
import { checkBudget, forgiveFailure, overBudget, recordFailure } from './auth-failures.ts';
import { newTokenId } from '../ids.ts';
import { hashPassword, needsRehash, verifyPassword } from '../passwords.ts';
import { hashToken, mintToken, parseToken, safeEqual } from '../tokens.ts';
import type { Principal } from './principal.ts';
import type { AuditChannel } from '../db/entities/audit.ts';
import { auditPut } from '../db/entities/audit.ts';
import { auditEntry, audited } from '../db/audited.ts';

/**
 * Failed logins allowed per window: per email from one address (the lockout a stranger elsewhere
 * cannot trigger), and per address across emails (password spraying). Successes are not counted.
 */
export const LOGIN_LIMITS = { windowSeconds: 300, perEmailAndIp: 10, perIp: 50 } as const;

const badCredentials = () => unauthorized('INVALID_CREDENTIALS', 'Email or password is wrong.');

/**
 * Log in. Before the password is looked at, one attempt is reserved from each of the two login
 * windows (email + address, address) and from the address's failure budget shared with every route
 * (auth-failures.ts), three conditional increments in parallel, so concurrent guesses can never pass
 * a limit; a success gives all three back (the email + address window is cleared: reset on success).
 * So only failures stay counted. An unknown email costs a full scrypt like a known one, so the answer
 * takes the same time either way; a disabled member learns it only with the right password.
 */
export async function login(email: string, password: string, sourceIp: string, now = Date.now(), channel: AuditChannel = 'api') {
  const normalized = email.trim().toLowerCase();
  checkBudget(sourceIp, now);
  const subjects = [`LOGINFAIL#${normalized}#${sourceIp}`, `LOGINFAIL#IP#${sourceIp}`] as const;
  const [byEmail, byIp, over] = await Promise.all([
    takeFromWindow(subjects[0], LOGIN_LIMITS.perEmailAndIp, LOGIN_LIMITS.windowSeconds, now),
    takeFromWindow(subjects[1], LOGIN_LIMITS.perIp, LOGIN_LIMITS.windowSeconds, now),
    recordFailure(sourceIp, now),
  ]);
  if (over !== undefined) throw overBudget(over);
  if (!byEmail.allowed || !byIp.allowed) {
    const retry = Math.max(1, Math.max(byEmail.resetAt, byIp.resetAt) - Math.floor(now / 1000));
    throw rateLimited(retry, {});
  }
  const user = await getUserByEmail(normalized);
  const via = { ip: sourceIp, channel };
  if (!(await verifyPassword(password, user?.passwordHash)) || !user) {
    // A wrong password for a member's email is on their account's log (an unknown email is on none).
    if (user) await signInFailed(user, via, 'password', now);
    throw badCredentials();
  }
  await Promise.all([
    clearWindow(subjects[0], LOGIN_LIMITS.windowSeconds, now),
    giveBack(subjects[1], LOGIN_LIMITS.windowSeconds, now),
    forgiveFailure(sourceIp, now),
    needsRehash(user.passwordHash) ? upgradePasswordHash(user, password) : undefined,
  ]);
  if (user.disabled) {
    await signInFailed(user, via, 'disabled', now);
    throw forbidden('MEMBER_DISABLED', 'This member is disabled; ask an account admin.');
  }
  const sessionId = newTokenId();
  const token = mintToken('dys', sessionId);
  const expiresAt = now + config().SESSION_TTL_HOURS * 3_600_000;
  await putSession(
    {
      sessionId,
      tokenHash: hashToken(token),
      accountId: user.accountId,
      userId: user.userId,
      createdAt: now,
      expiresAt,
      ...(user.gen ? { userGen: user.gen } : {}),
    },
    [audited({ kind: 'session', accountId: user.accountId, userId: user.userId, via }, 'session.signed_in', sessionObject(user), {}, now)],
  );
  return { token, expiresAt, user: { id: user.userId, email: user.email, role: user.role } };
}

const sessionObject = (user: User) => ({ type: 'member', id: user.userId, name: user.email });

/**
 * A refused sign-in with a member's email: its audit entry alone (nothing else changes), by nobody
 * signed in (the email's member is named, so it is in their own log). Best effort: the refusal stands
 * even if the entry cannot be written.
 */
async function signInFailed(user: User, via: { ip: string; channel: AuditChannel }, reason: string, now: number) {
  const who = { kind: 'anonymous' as const, accountId: user.accountId, userId: user.userId, email: user.email, via };
  await db()
    .send(
      new TransactWriteCommand({
        TransactItems: [auditPut(auditEntry(who, 'session.sign_in_failed', sessionObject(user), { reason }, now))],
      }),
    )
    .catch((error: unknown) => logger.warn('failed sign-in not audited', { userId: user.userId, error: error as Error }));
}

/** A stored hash with older parameters is replaced at a successful login (best effort). */
async function upgradePasswordHash(user: User, password: string) {
  await setPasswordHash(user, await hashPassword(password)).catch((error: unknown) =>
    logger.warn('password hash not upgraded', { userId: user.userId, error: error as Error }),
  );
}

const invalidSession = () => unauthorized('INVALID_SESSION', 'The session is invalid or expired; log in again.');

/** Resolve a console session token to its user, or 401. */
export async function authenticateSession(token: string, now = Date.now()): Promise<Extract<Principal, { kind: 'session' }>> {
  return (await sessionOf(token, now)).principal;
}

/**
 * A console page's session (the browser's cookie holds the same token): its user, with the email and
 * the account's name every page shows. The account is read beside the user, one round trip after the session.
 */
export async function consoleSession(token: string, now = Date.now()) {
  const { principal, user, account } = await sessionOf(token, now, true);
  if (!account) throw invalidSession();
  return { principal, email: user.email, accountName: account.name };
}

async function sessionOf(token: string, now: number, withAccount = false) {
  const parsed = parseToken(token, 'dys');
  if (!parsed) throw invalidSession();
  const session = await getSession(parsed.id);
  if (!session || !safeEqual(hashToken(token), session.tokenHash) || session.expiresAt <= now) throw invalidSession();
  // The user is read on every request (never cached), so removing or disabling a member, or changing
  // their role, applies to their live sessions at once. A disable raises the membership generation,
  // so a session from before it stays refused after a re-enable (and one a login wrote while the
  // disable committed is refused too).
  const [user, account] = await Promise.all([
    getUser(session.accountId, session.userId),
    withAccount ? getAccount(session.accountId) : undefined,
  ]);
  const gen = user?.gen ?? 0;
  if (!user || user.disabled || (session.userGen ?? 0) !== gen) throw invalidSession();
  const principal = {
    kind: 'session' as const,
    accountId: user.accountId,
    userId: user.userId,
    role: user.role,
    sessionId: session.sessionId,
    userGen: gen,
  };
  return { principal, user, account };
}

/** Sign out: the session is deleted with its audit entry (a session gone already changes nothing). */
export async function logout(p: Extract<Principal, { kind: 'session' }>): Promise<void> {
  await deleteSession(p.sessionId, [audited(p, 'session.signed_out', { type: 'member', id: p.userId })]);
}

export async function me(p: Extract<Principal, { kind: 'session' }>) {
  const [user, account] = await Promise.all([getUser(p.accountId, p.userId), getAccount(p.accountId)]);
  if (!user || !account) throw invalidSession();
  return {
    user: { id: user.userId, email: user.email, role: user.role },
    account: { id: account.accountId, name: account.name, plan: account.plan },
  };
}

/**
 * Change the caller's own password: the current one must be right (400 `VALIDATION_FAILED` at
 * `currentPassword` otherwise: a session alone does not change it). The hash is replaced on the condition
 * that it is the one checked, so a concurrent change makes this one fail rather than both pass.
 */
export async function changePassword(p: Extract<Principal, { kind: 'session' }>, input: { currentPassword: string; newPassword: string }) {
  const user = await getUser(p.accountId, p.userId);
  if (!user) throw invalidSession();
  if (!(await verifyPassword(input.currentPassword, user.passwordHash)))
    throw validationFailed([{ path: 'currentPassword', message: 'is not your current password' }]);
  try {
    const entry = audited(p, 'password.changed', { type: 'user', id: user.userId, name: user.email });
    await setPasswordHash(user, await hashPassword(input.newPassword), [entry]);
  } catch (e) {
    if (isConditionFailure(e)) throw validationFailed([{ path: 'currentPassword', message: 'was changed meanwhile; sign in again' }]);
    throw e;
  }
}
