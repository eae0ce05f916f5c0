import { ApiKey, keyKey } from './entities/api-key.ts';
import { User, userKey } from './entities/user.ts';
import { Webhook, webhookKey } from './entities/webhook.ts';
import { BatchGetCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '../clients.ts';

/** A record that requests read on every call (shared/domain/records.ts caches them): an API key, a webhook, a member. */
export type RecordRef =
  | { kind: 'apiKey'; keyId: string }
  | { kind: 'webhook'; webhookId: string }
  | { kind: 'user'; accountId: string; userId: string };
export type RecordOf<R extends RecordRef> = R extends { kind: 'apiKey' } ? ApiKey : R extends { kind: 'webhook' } ? Webhook : User;

const keyOf = (r: RecordRef) =>
  r.kind === 'apiKey' ? keyKey(r.keyId) : r.kind === 'webhook' ? webhookKey(r.webhookId) : userKey(r.accountId, r.userId);
const parse = (r: RecordRef, item: Record<string, unknown>) =>
  r.kind === 'apiKey' ? ApiKey.parse(item) : r.kind === 'webhook' ? Webhook.parse(item) : User.parse(item);

type Key = { PK: string; SK: string };

/**
 * The records, in one BatchGet (none when `refs` is empty), in `refs`' order; undefined where there is
 * none. Its own BatchGet rather than ./query.ts's: the trigger's bundle holds this and not that.
 */
export async function readRecords(refs: readonly RecordRef[]): Promise<(ApiKey | Webhook | User | undefined)[]> {
  const keys: Key[] = refs.map(keyOf);
  let pending = keys;
  const items: Record<string, unknown>[] = [];
  // BatchGet may leave keys unprocessed under throttling; they are asked again (the SDK backs off).
  for (let attempt = 0; pending.length > 0; attempt++) {
    if (attempt === 3) throw new Error('BatchGet left keys unprocessed three times');
    const res = await db().send(new BatchGetCommand({ RequestItems: { [tableName()]: { Keys: pending } } }));
    items.push(...(res.Responses?.[tableName()] ?? []));
    pending = (res.UnprocessedKeys?.[tableName()]?.Keys ?? []) as Key[];
  }
  return refs.map((r, i) => {
    const item = items.find((it) => it.PK === keys[i]?.PK && it.SK === keys[i]?.SK);
    return item ? parse(r, item) : undefined;
  });
}
