import { type KeyOwner, memberGens } from '../db/entities/account.ts';
import {
  ALL_SCOPES,
  getApiKey,
  listApiKeys,
  putApiKeyOfActiveOwner,
  revokeApiKey,
  type ApiKey,
  type Scope,
} from '../db/entities/api-key.ts';
import { getUser } from '../db/entities/user.ts';
import { AppError, forbidden, notFound, unauthorized } from '../errors.ts';
import { newTokenId } from '../ids.ts';
import { hashToken, mintToken, parseToken, safeEqual } from '../tokens.ts';
import { audited } from '../db/audited.ts';
import type { Principal, Via } from './principal.ts';
import { caches, keyRead, readThrough } from './records.ts';

export { ALL_SCOPES, type Scope };
const DAY = 86_400_000;

type SessionPrincipal = Extract<Principal, { kind: 'session' }>;

/** The membership generation a key was made under (absent: 0), and its owner as the rate-limit write checks them. */
export const keyOwner = (k: ApiKey): KeyOwner => ({ userId: k.ownerId, gen: k.ownerGen ?? 0 });

/**
 * A key's status; `ownerGen` is its owner's current membership generation where the caller read it
 * (listings): a key made under another one is suspended (its owner was disabled or removed since).
 */
export function keyStatus(k: ApiKey, now = Date.now(), ownerGen?: number): 'active' | 'expired' | 'revoked' | 'suspended' {
  if (k.revokedAt !== undefined) return 'revoked';
  if (k.ownerDisabled || (ownerGen !== undefined && ownerGen !== (k.ownerGen ?? 0))) return 'suspended';
  return k.expiresAt <= now ? 'expired' : 'active';
}

/** The console view of a key: usage, never the hash. */
export function keyView(k: ApiKey, now = Date.now(), ownerGen?: number) {
  const today = new Date(now).toISOString().slice(0, 10);
  return {
    id: k.keyId,
    name: k.name,
    ownerId: k.ownerId,
    scopes: k.scopes,
    createdAt: k.createdAt,
    expiresAt: k.expiresAt,
    revokedAt: k.revokedAt ?? null,
    status: keyStatus(k, now, ownerGen),
    usage: { total: k.usageTotal, today: k.usageDay === today ? k.usageToday : 0, lastUsedAt: k.lastUsedAt ?? null },
  };
}

/**
 * Create a key for the caller; the token is in the result this once and never stored. The key is put
 * in one transaction with a condition on its owner's user item: present, enabled and of the
 * membership generation the caller's session was made under (read now when the caller has none). A
 * disable or removal that commits first refuses it (401 `INVALID_SESSION`: the session is over too);
 * one that commits after raises the generation, which ends the key with the rest.
 */
export async function createKey(
  owner: Pick<SessionPrincipal, 'accountId' | 'userId'> & { userGen?: number; via?: Via },
  input: { name: string; scopes: readonly Scope[]; validityDays: number },
  now = Date.now(),
) {
  const gen = owner.userGen ?? (await getUser(owner.accountId, owner.userId))?.gen ?? 0;
  const keyId = newTokenId();
  const token = mintToken('dyk', keyId);
  const key: ApiKey = {
    keyId,
    accountId: owner.accountId,
    ownerId: owner.userId,
    name: input.name,
    scopes: [...new Set(input.scopes)],
    tokenHash: hashToken(token),
    createdAt: now,
    expiresAt: now + input.validityDays * DAY,
    usageTotal: 0,
    usageToday: 0,
    ...(gen ? { ownerGen: gen } : {}),
  };
  const entry = audited(
    { kind: 'session', accountId: owner.accountId, userId: owner.userId, via: owner.via },
    'key.created',
    { type: 'key', id: keyId, name: key.name },
    { scopes: key.scopes, validityDays: input.validityDays },
    now,
  );
  if (!(await putApiKeyOfActiveOwner(key, gen, [entry])))
    throw unauthorized('INVALID_SESSION', 'The session is invalid or expired; log in again.');
  return { ...keyView(key, now), token };
}

/** Own keys; an admin may ask for the whole account's. */
export async function listKeys(p: SessionPrincipal, all: boolean) {
  if (all && p.role !== 'admin') throw forbidden('ADMIN_ONLY', 'Only admins may list every key of the account.');
  const [keys, gens] = await Promise.all([listApiKeys(p.accountId, all ? undefined : p.userId), memberGens(p.accountId)]);
  const now = Date.now();
  return { items: keys.map((k) => keyView(k, now, gens(k.ownerId))), nextCursor: null };
}

/** Revoke (owner or admin of the same account); another account's key is not found. */
export async function revokeKey(p: SessionPrincipal, keyId: string, now = Date.now()): Promise<void> {
  const key = await getApiKey(keyId);
  if (!key || key.accountId !== p.accountId) throw notFound('KEY_NOT_FOUND', 'No such API key.');
  if (key.ownerId !== p.userId && p.role !== 'admin') throw forbidden('NOT_KEY_OWNER', 'Only the owner or an admin may revoke this key.');
  const entry = audited(
    p,
    'key.revoked',
    { type: 'key', id: keyId, name: key.name },
    key.ownerId !== p.userId ? { ownerId: key.ownerId } : {},
    now,
  );
  // Revoked already: nothing changed, nothing recorded.
  await revokeApiKey(keyId, now, [entry]);
  caches.keys.delete(keyId);
}

export const invalidKey = () => unauthorized('INVALID_API_KEY', 'The API key is invalid, expired or revoked.');
export const isInvalidKey = (e: unknown) => e instanceof AppError && e.code === 'INVALID_API_KEY';

/**
 * Resolve a presented token to its key: format and checksum first (no read for garbage), then the
 * record (cached for up to 5 s, see `records.ts`), a constant-time hash comparison, revocation and expiry. Scope is checked by the caller,
 * whose endpoint decides the status for a missing scope.
 */
export async function authenticateKey(token: string, now = Date.now()): Promise<ApiKey> {
  const read = presentedKeyRead(token);
  if (!read) throw invalidKey();
  const [key] = await readThrough([read], now);
  return verifiedKey(token, key, now);
}

/** The cached read of the key a token names (format and checksum first: no read for garbage). */
export const presentedKeyRead = (token: string) => {
  const parsed = parseToken(token, 'dyk');
  return parsed ? keyRead(parsed.id) : undefined;
};

/** `key` (read for `token`) if the token is its own, in constant time, and the key is active; else 401 `INVALID_API_KEY`. */
export function verifiedKey(token: string, key: ApiKey | undefined, now = Date.now()): ApiKey {
  if (!key || !safeEqual(hashToken(token), key.tokenHash) || keyStatus(key, now) !== 'active') throw invalidKey();
  return key;
}

/** One key as the console's revoke page shows it: the owner's or, for an admin, any of the account's; another account's is not found. */
export async function keyFor(p: SessionPrincipal, keyId: string, now = Date.now()) {
  const key = await getApiKey(keyId);
  if (!key || key.accountId !== p.accountId) throw notFound('KEY_NOT_FOUND', 'No such API key.');
  if (key.ownerId !== p.userId && p.role !== 'admin') throw forbidden('NOT_KEY_OWNER', 'Only the owner or an admin may revoke this key.');
  return keyView(key, now);
}
