import {
  type AccountSecret,
  deleteSecret,
  getSecret,
  listSecrets,
  membersOf,
  putSecret,
  type SecretSummary,
  updateSecretItem,
  touchSecret,
} from '../db/entities/account-secret.ts';
import { conflict, notFound } from '../errors.ts';
import { keyring, seal, unseal } from '../keyring.ts';
import { logger } from '../logger.ts';
import type { Principal } from './principal.ts';

/**
 * Account secrets: named values admins store once and definitions read as `$secrets.NAME`
 * (shared/engine/secret-refs.ts). Values are sealed at rest (shared/keyring.ts) and never leave
 * through the API; the runs worker opens the ones a step names, through a short cache.
 */

type SessionPrincipal = Extract<Principal, { kind: 'session' }>;

/** How long the worker keeps an opened value (per account and name). */
export const SECRET_CACHE_MS = 30_000;
const CACHE_MAX = 1000;

const context = (accountId: string, name: string) => ({ accountId, secret: name });
const secretNotFound = (name: string) => notFound('SECRET_NOT_FOUND', `No secret named ${name}.`);

/** What the console shows of a secret: never its value. */
export const secretView = (s: SecretSummary) => ({
  name: s.name,
  createdAt: s.createdAt,
  updatedAt: s.updatedAt,
  lastUsedAt: s.lastUsedAt ?? null,
  allowedHosts: s.allowedHosts ?? null,
  members: membersOf(s),
});

type SecretRules = { allowedHosts?: string[]; members?: 'use' | 'none' };

export async function createSecret(p: SessionPrincipal, input: { name: string; value: string } & SecretRules, now = Date.now()) {
  const sealed = await seal(keyring(), input.value, context(p.accountId, input.name));
  const secret: AccountSecret = {
    accountId: p.accountId,
    name: input.name,
    ...sealed,
    createdAt: now,
    updatedAt: now,
    ...(input.allowedHosts ? { allowedHosts: [...new Set(input.allowedHosts)] } : {}),
    members: input.members ?? 'none',
  };
  if (!(await putSecret(secret)))
    throw conflict('SECRET_EXISTS', `A secret named ${input.name} exists; PUT /api/secrets/${input.name} replaces its value.`);
  return secretView(secret);
}

export async function listAccountSecrets(p: SessionPrincipal) {
  const items = await listSecrets(p.accountId);
  return { items: items.sort((a, b) => (a.name < b.name ? -1 : 1)).map(secretView), nextCursor: null };
}

/** Replace a secret's value, host binding (null removes it) or members rule; what is not sent stays. */
export async function updateSecret(
  p: SessionPrincipal,
  name: string,
  change: { value?: string; allowedHosts?: string[] | null; members?: 'use' | 'none' },
  now = Date.now(),
) {
  // Sealing first costs a data key for a name that may not exist; it saves a read on every update.
  const sealed = change.value === undefined ? undefined : await seal(keyring(), change.value, context(p.accountId, name));
  const allowedHosts = change.allowedHosts && [...new Set(change.allowedHosts)];
  const updated = await updateSecretItem(p.accountId, name, { sealed, allowedHosts, members: change.members }, now);
  if (!updated) throw secretNotFound(name);
  forget(p.accountId, name);
  return secretView(updated);
}

export async function removeSecret(p: SessionPrincipal, name: string): Promise<void> {
  if (!(await deleteSecret(p.accountId, name))) throw secretNotFound(name);
  forget(p.accountId, name);
}

const cache = new Map<string, { value: string; hosts?: string[]; until: number }>();
const cacheKey = (accountId: string, name: string) => `${accountId}\u0000${name}`;
const forget = (accountId: string, name: string) => cache.delete(cacheKey(accountId, name));

/**
 * The values of an account's secrets by name (and the host binding of those that have one), for a step that reads them: from a 30 s cache, else
 * read and opened, with `lastUsedAt` set once per fill (one small write, never one per step).
 * `missing` names the ones the account does not have. Never logs a value.
 */
export async function readSecrets(
  accountId: string,
  names: readonly string[],
  now = Date.now(),
  /** Set `lastUsedAt` on a fill; the notifications worker, which may not write, passes false. */
  touch = true,
): Promise<{ values: Record<string, string>; hosts: Record<string, string[]>; missing: string[] }> {
  const values: Record<string, string> = {};
  /** The host binding of each secret that has one. */
  const hosts: Record<string, string[]> = {};
  const missing: string[] = [];
  await Promise.all(
    names.map(async (name) => {
      const key = cacheKey(accountId, name);
      const hit = cache.get(key);
      if (hit && hit.until > now) {
        values[name] = hit.value;
        if (hit.hosts) hosts[name] = hit.hosts;
        return;
      }
      const item = await getSecret(accountId, name);
      if (!item) return void missing.push(name);
      const value = await unseal(keyring(), item, context(accountId, name));
      values[name] = value;
      if (item.allowedHosts) hosts[name] = item.allowedHosts;
      cache.delete(key);
      cache.set(key, { value, hosts: item.allowedHosts, until: now + SECRET_CACHE_MS });
      if (cache.size > CACHE_MAX) cache.delete(cache.keys().next().value as string);
      if (touch)
        await touchSecret(accountId, name, now).catch((error: unknown) =>
          logger.warn('secret lastUsedAt not updated', { accountId, secret: name, error: (error as Error).name }),
        );
    }),
  );
  return { values, hosts, missing: missing.sort() };
}

/** Empty the worker's cache (tests). */
export const clearSecretCache = () => cache.clear();
