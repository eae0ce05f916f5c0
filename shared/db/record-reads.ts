import { ApiKey, keyKey } from './entities/api-key.ts';
import { User, userKey } from './entities/user.ts';
import { Webhook, webhookKey } from './entities/webhook.ts';
import { getItems } from './query.ts';

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

/** The records, in one BatchGet (none when `refs` is empty), in `refs`' order; undefined where there is none. */
export async function readRecords(refs: readonly RecordRef[]): Promise<(ApiKey | Webhook | User | undefined)[]> {
  if (refs.length === 0) return [];
  const keys = refs.map(keyOf);
  const items = await getItems(keys);
  return refs.map((r, i) => {
    const key = keys[i] as { PK: string; SK: string };
    const item = items.find((it) => it.PK === key.PK && it.SK === key.SK);
    return item ? parse(r, item) : undefined;
  });
}
