import { writeAll } from '../db/transact.ts';
import { deleteSession, getSession, putSession } from '../db/entities/session.ts';
import { getUser, setPasswordHash, type User } from '../db/entities/user.ts';
import { getUsersByEmail } from '../db/entities/user-email.ts';
import { getAccount } from '../db/entities/account.ts';
import { config } from '../config.ts';
import { forbidden, unauthorized } from '../errors.ts';
import { logger } from '../logger.ts';
import { loginSucceeded, reserveLogin } from './login-limits.ts';
import { newTokenId } from '../ids.ts';
import { hashPassword, needsRehash, verifyPassword } from '../passwords.ts';
import { hashToken, mintToken, parseToken, safeEqual } from '../tokens.ts';
import type { Principal } from './principal.ts';
import type { AuditChannel } from '../db/entities/audit.ts';
import { auditPut } from '../db/entities/audit.ts';
import { auditEntry, audited } from '../db/audited.ts';

export { LOGIN_LIMITS } from './login-limits.ts';

const badCredentials = () => unauthorized('INVALID_CREDENTIALS', 'Email or password is wrong.');

/**
 * Log in. Before the password is looked at, one attempt is reserved from each sign-in limit and from
 * the address's failure budget shared with every route (login-limits.ts: conditional increments in
 * parallel, so concurrent guesses can never pass a limit); a success gives them back (the email +
 * address count is cleared: reset on success). So only failures stay counted. An unknown email costs
 * a full scrypt like a known one, so the answer takes the same time either way; a disabled member
 * learns it only with the right password.
 */
export async function login(email: string, password: string, sourceIp: string, now = Date.now(), channel: AuditChannel = 'api') {
  const normalized = email.trim().toLowerCase();
  const attempt = await reserveLogin(normalized, sourceIp, now);
  // Strongly consistent: a session made just after a password change or "sign out everywhere" must carry the new epoch.
  const members = await getUsersByEmail(normalized, true);
  const via = { ip: sourceIp, channel };
  const user = await memberFor(members, password);
  if (!user) {
    // A wrong password for a member's email is on their account's log (an unknown email is on none).
    await Promise.all(members.map((m) => signInFailed(m, via, 'password', now)));
    throw badCredentials();
  }
  await Promise.all([loginSucceeded(attempt), needsRehash(user.passwordHash) ? upgradePasswordHash(user, password) : undefined]);
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
      ...(user.sessionEpoch ? { userEpoch: user.sessionEpoch } : {}),
    },
    [audited({ kind: 'session', accountId: user.accountId, userId: user.userId, via }, 'session.signed_in', sessionObject(user), {}, now)],
  );
  return { token, expiresAt, user: { id: user.userId, email: user.email, role: user.role } };
}

/**
 * The member the password signs in as: an email may be a member of several accounts, each with its
 * own password; every one is checked (an unknown email costs one scrypt against a dummy hash), and the
 * oldest enabled member whose password it is wins (a disabled one only when no enabled one matches).
 */
async function memberFor(members: User[], password: string): Promise<User | undefined> {
  if (members.length === 0) {
    await verifyPassword(password, undefined);
    return undefined;
  }
  const matches: User[] = [];
  for (const m of members) if (await verifyPassword(password, m.passwordHash)) matches.push(m);
  return matches.find((m) => !m.disabled) ?? matches[0];
}

const sessionObject = (user: User) => ({ type: 'member', id: user.userId, name: user.email });

/**
 * A refused sign-in with a member's email: its audit entry alone (nothing else changes), by nobody
 * signed in (the email's member is named, so it is in their own log). Best effort: the refusal stands
 * even if the entry cannot be written.
 */
async function signInFailed(user: User, via: { ip: string; channel: AuditChannel }, reason: string, now: number) {
  const who = { kind: 'anonymous' as const, accountId: user.accountId, userId: user.userId, email: user.email, via };
  await writeAll([auditPut(auditEntry(who, 'session.sign_in_failed', sessionObject(user), { reason }, now))]).catch((error: unknown) =>
    logger.warn('failed sign-in not audited', { userId: user.userId, error: error as Error }),
  );
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
  // disable committed is refused too). A password change or "sign out everywhere" raises the session
  // epoch the same way (session-ends.ts): a session of an older epoch is refused.
  const [user, account] = await Promise.all([
    getUser(session.accountId, session.userId),
    withAccount ? getAccount(session.accountId) : undefined,
  ]);
  const gen = user?.gen ?? 0;
  if (!user || user.disabled || (session.userGen ?? 0) !== gen || (session.userEpoch ?? 0) !== (user.sessionEpoch ?? 0))
    throw invalidSession();
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
