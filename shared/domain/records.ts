import { BatchGetCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '../clients.ts';
import { TtlCache } from '../cache.ts';
import { ApiKey, keyKey } from '../db/entities/api-key.ts';
import { User, userKey } from '../db/entities/user.ts';
import { Webhook, webhookKey } from '../db/entities/webhook.ts';
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

type Key = { PK: string; SK: string };
/** One cached record: its cache and id there, its table key, and the entity's parser. */
export type CachedRead<T> = { cache: TtlCache<T | undefined>; id: string; key: Key; parse: (item: Record<string, unknown>) => T };

export const keyRead = (keyId: string): CachedRead<ApiKey> => ({
  cache: caches.keys,
  id: keyId,
  key: keyKey(keyId),
  parse: (i) => ApiKey.parse(i),
});
export const webhookRead = (webhookId: string): CachedRead<Webhook> => ({
  cache: caches.webhooks,
  id: webhookId,
  key: webhookKey(webhookId),
  parse: (i) => Webhook.parse(i),
});

export const userRead = (accountId: string, userId: string): CachedRead<User> => ({
  cache: caches.users,
  id: `${accountId}/${userId}`,
  key: userKey(accountId, userId),
  parse: (i) => User.parse(i),
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
  let keys: Key[] = missing.map((r) => r.key);
  const items: Record<string, unknown>[] = [];
  // BatchGet may leave keys unprocessed under throttling; they are asked again (the SDK backs off).
  for (let attempt = 0; keys.length > 0; attempt++) {
    if (attempt === 3) throw new Error('BatchGet left keys unprocessed three times');
    const res = await db().send(new BatchGetCommand({ RequestItems: { [tableName()]: { Keys: keys } } }));
    items.push(...(res.Responses?.[tableName()] ?? []));
    keys = (res.UnprocessedKeys?.[tableName()]?.Keys ?? []) as Key[];
  }
  for (const r of missing) {
    const item = items.find((i) => i.PK === r.key.PK && i.SK === r.key.SK);
    const value = item ? r.parse(item) : undefined;
    r.cache.set(r.id, value, now);
    values[reads.indexOf(r)] = value;
  }
  return values as Values<R>;
}
