import { deleteSession, getSession, putSession } from '../db/entities/session.ts';
import { getUser, getUserByEmail } from '../db/entities/user.ts';
import { getAccount } from '../db/entities/account.ts';
import { takeFromWindow } from '../db/entities/counter.ts';
import { config } from '../config.ts';
import { rateLimited, unauthorized } from '../errors.ts';
import { newTokenId } from '../ids.ts';
import { verifyPassword } from '../passwords.ts';
import { hashToken, mintToken, parseToken, safeEqual } from '../tokens.ts';
import type { Principal } from './principal.ts';

/** Login attempts allowed per window, per email and per client address. */
export const LOGIN_LIMITS = { windowSeconds: 300, perEmail: 10, perIp: 50 } as const;

const badCredentials = () => unauthorized('INVALID_CREDENTIALS', 'Email or password is wrong.');

/**
 * Log in: rate-limited per email and per address before the password is looked at; an unknown email
 * and a wrong password give the same answer after the same amount of work.
 */
export async function login(email: string, password: string, sourceIp: string, now = Date.now()) {
  const normalized = email.trim().toLowerCase();
  const [byEmail, byIp] = await Promise.all([
    takeFromWindow(`LOGIN#EMAIL#${normalized}`, LOGIN_LIMITS.perEmail, LOGIN_LIMITS.windowSeconds, now),
    takeFromWindow(`LOGIN#IP#${sourceIp}`, LOGIN_LIMITS.perIp, LOGIN_LIMITS.windowSeconds, now),
  ]);
  if (!byEmail.allowed || !byIp.allowed) {
    const retry = Math.max(1, Math.max(byEmail.resetAt, byIp.resetAt) - Math.floor(now / 1000));
    throw rateLimited(retry, {});
  }
  const user = await getUserByEmail(normalized);
  if (!(await verifyPassword(password, user?.passwordHash)) || !user) throw badCredentials();
  const sessionId = newTokenId();
  const token = mintToken('dys', sessionId);
  const expiresAt = now + config().SESSION_TTL_HOURS * 3_600_000;
  await putSession({ sessionId, tokenHash: hashToken(token), accountId: user.accountId, userId: user.userId, createdAt: now, expiresAt });
  return { token, expiresAt, user: { id: user.userId, email: user.email, role: user.role } };
}

const invalidSession = () => unauthorized('INVALID_SESSION', 'The session is invalid or expired; log in again.');

/** Resolve a console session token to its user, or 401. */
export async function authenticateSession(token: string, now = Date.now()): Promise<Extract<Principal, { kind: 'session' }>> {
  const parsed = parseToken(token, 'dys');
  if (!parsed) throw invalidSession();
  const session = await getSession(parsed.id);
  if (!session || !safeEqual(hashToken(token), session.tokenHash) || session.expiresAt <= now) throw invalidSession();
  const user = await getUser(session.accountId, session.userId);
  if (!user) throw invalidSession();
  return { kind: 'session', accountId: user.accountId, userId: user.userId, role: user.role, sessionId: session.sessionId };
}

export const logout = (p: Extract<Principal, { kind: 'session' }>) => deleteSession(p.sessionId);

export async function me(p: Extract<Principal, { kind: 'session' }>) {
  const [user, account] = await Promise.all([getUser(p.accountId, p.userId), getAccount(p.accountId)]);
  if (!user || !account) throw invalidSession();
  return {
    user: { id: user.userId, email: user.email, role: user.role },
    account: { id: account.accountId, name: account.name, plan: account.plan },
  };
}
