import { TtlCache } from '../cache.ts';
import type { ApiKey } from '../db/entities/api-key.ts';
import type { User } from '../db/entities/user.ts';
import type { Webhook } from '../db/entities/webhook.ts';
import { type RecordRef, readRecords } from '../db/record-reads.ts';
import { RECORD_TTL_MS } from '../db/retention.ts';

/**
 * Records that open-platform requests read on every call, cached per function instance (bounded,
 * oldest evicted first) for 5 s: a revoked or expired key, a disabled, deleted or rebound webhook take
 * effect within 5 s in every instance, and at once in the instance that made the change (it drops its
 * own entry). A cached "not found" is kept for the same time. Users (a reviewer's role) likewise. Plans need no cache: the rate-limit
 * write returns them (`countAccountRequest`); workflows are read by the worker, not the trigger.
 */
export const caches = {
  keys: new TtlCache<ApiKey | undefined>(RECORD_TTL_MS),
  webhooks: new TtlCache<Webhook | undefined>(RECORD_TTL_MS),
  /** A reviewer's role, for approvals that name `role:` reviewers. */
  users: new TtlCache<User | undefined>(RECORD_TTL_MS),
};

/** One cached record: its cache and id there, and which record it is. */
export type CachedRead<T> = { cache: TtlCache<T | undefined>; id: string; ref: RecordRef };

export const keyRead = (keyId: string): CachedRead<ApiKey> => ({
  cache: caches.keys,
  id: keyId,
  ref: { kind: 'apiKey', keyId },
});
export const webhookRead = (webhookId: string): CachedRead<Webhook> => ({
  cache: caches.webhooks,
  id: webhookId,
  ref: { kind: 'webhook', webhookId },
});

export const userRead = (accountId: string, userId: string): CachedRead<User> => ({
  cache: caches.users,
  id: `${accountId}/${userId}`,
  ref: { kind: 'user', accountId, userId },
});

type Values<R> = { -readonly [I in keyof R]: R[I] extends CachedRead<infer T> ? T | undefined : undefined };

/**
 * Read records through their caches: the fresh ones from memory, every other one in a single
 * BatchGet (so no round trip at all when everything is cached). `undefined` entries read nothing.
 */
export async function readThrough<const R extends readonly (CachedRead<any> | undefined)[]>(
  reads: R,
  now = Date.now(),
): Promise<Values<R>> {
  const values: unknown[] = reads.map((r) => r?.cache.peek(r.id, now)?.value);
  const missing = reads.filter((r): r is CachedRead<unknown> => r !== undefined && !r.cache.peek(r.id, now));
  const read = await readRecords(missing.map((r) => r.ref));
  missing.forEach((r, i) => {
    const value = read[i];
    r.cache.set(r.id, value, now);
    values[reads.indexOf(r)] = value;
  });
  return values as Values<R>;
}
