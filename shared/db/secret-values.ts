import { keyring, unseal } from '../keyring.ts';
import { logger } from '../logger.ts';
import { getSecret, touchSecret } from './entities/account-secret.ts';

/**
 * The values of account secrets, opened for the code that uses them (the runs worker's steps, the
 * notifications worker's signatures): below the engine, so the engine and the domain
 * (shared/domain/account-secrets.ts, which writes them) read them alike. Values are sealed at rest
 * (shared/keyring.ts) and kept opened in a short per-instance cache.
 */

/** How long the worker keeps an opened value (per account and name). */
export const SECRET_CACHE_MS = 30_000;
const CACHE_MAX = 1000;

/** What a secret's value is sealed for (the keyring's context): its account and name. */
export const sealContext = (accountId: string, name: string) => ({ accountId, secret: name });

const cache = new Map<string, { value: string; hosts?: string[]; until: number }>();
const cacheKey = (accountId: string, name: string) => `${accountId}\u0000${name}`;

/** Drop a secret's opened value in this instance (it was changed or removed here). */
export const forgetSecret = (accountId: string, name: string) => cache.delete(cacheKey(accountId, name));

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
      const value = await unseal(keyring(), item, sealContext(accountId, name));
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
