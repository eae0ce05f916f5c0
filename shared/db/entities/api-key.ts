import { GetCommand, PutCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import { db, tableName } from '../../clients.ts';
import { applied } from '../update.ts';
import { count, flushCounts } from '../counters.ts';
import { retryConflicts } from '../conflicts.ts';
import { queryAll } from '../query.ts';
import { genCondition, userKey } from './user.ts';
import { type TransactItem, writeWith } from '../transact.ts';

// Access patterns: get by id (global; the id is inside the token) · list by account, or by account
// and owner (GSI1: GSI1PK = ACC#<account>, GSI1SK = KEY#<owner>#<keyId>).
export const Scope = z.enum(['WORKFLOW_READ', 'WORKFLOW_EXECUTE', 'WEBHOOK_TRIGGER', 'APPROVAL_RESPOND', 'AUDIT_READ']);
export type Scope = z.infer<typeof Scope>;
export const ALL_SCOPES = Scope.options;

export const ApiKey = z.object({
  keyId: z.string(),
  accountId: z.string(),
  ownerId: z.string(),
  name: z.string(),
  scopes: z.array(Scope),
  tokenHash: z.string(),
  createdAt: z.number(),
  expiresAt: z.number(),
  revokedAt: z.number().optional(),
  /** Set while the key's owner is disabled (members.ts); the key is refused meanwhile. */
  ownerDisabled: z.boolean().optional(),
  /** The owner's membership generation the key was made (or restored) under (user.ts); absent is 0. */
  ownerGen: z.number().optional(),
  usageTotal: z.number().default(0),
  usageDay: z.string().optional(),
  usageToday: z.number().default(0),
  lastUsedAt: z.number().optional(),
});
export type ApiKey = z.infer<typeof ApiKey>;

export const keyKey = (keyId: string) => ({ PK: `KEY#${keyId}`, SK: 'KEY' });
const gsi = (k: Pick<ApiKey, 'accountId' | 'ownerId' | 'keyId'>) => ({
  GSI1PK: `ACC#${k.accountId}`,
  GSI1SK: `KEY#${k.ownerId}#${k.keyId}`,
});

/**
 * Create a key in one transaction with a check of its owner's user item: present, not disabled, of
 * membership generation `gen`. False when the owner fails it (removed, disabled, or changed since).
 */
export async function putApiKeyOfActiveOwner(k: ApiKey, gen: number, extra: readonly TransactItem[] = []): Promise<boolean> {
  const put = () =>
    db().send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Put: {
              TableName: tableName(),
              Item: { ...keyKey(k.keyId), ...gsi(k), type: 'apiKey', ...k },
              ConditionExpression: 'attribute_not_exists(PK)',
            },
          },
          {
            ConditionCheck: {
              TableName: tableName(),
              Key: userKey(k.accountId, k.ownerId),
              ConditionExpression: `attribute_exists(PK) AND (attribute_not_exists(disabled) OR disabled = :false) AND ${genCondition(gen)}`,
              ExpressionAttributeNames: { '#gen': 'gen' },
              ExpressionAttributeValues: { ':false': false, ':gen': gen },
            },
          },
          ...extra,
        ],
      }),
    );
  // A membership change in flight on the user item (AWS reports the clash; nothing was written): again.
  return retryConflicts(() => applied(put()));
}

export async function putApiKey(k: ApiKey): Promise<void> {
  await db().send(
    new PutCommand({
      TableName: tableName(),
      Item: { ...keyKey(k.keyId), ...gsi(k), type: 'apiKey', ...k },
      ConditionExpression: 'attribute_not_exists(PK)',
    }),
  );
}

export async function getApiKey(keyId: string): Promise<ApiKey | undefined> {
  const { Item } = await db().send(new GetCommand({ TableName: tableName(), Key: keyKey(keyId) }));
  return Item ? ApiKey.parse(Item) : undefined;
}

/**
 * Keys of an account, or of one owner in it, newest first. This instance's own counts are written
 * first, as for a webhook's stats (`readStats`).
 */
export async function listApiKeys(accountId: string, ownerId?: string): Promise<ApiKey[]> {
  await flushCounts();
  const keys = await queryAll(
    {
      IndexName: 'GSI1',
      KeyConditionExpression: 'GSI1PK = :pk AND begins_with(GSI1SK, :sk)',
      ExpressionAttributeValues: { ':pk': `ACC#${accountId}`, ':sk': ownerId ? `KEY#${ownerId}#` : 'KEY#' },
    },
    (i) => ApiKey.parse(i),
  );
  return keys.sort((a, b) => b.createdAt - a.createdAt);
}

/** Mark revoked (with `extra` in the same transaction); false when the key does not exist or was revoked already. */
export async function revokeApiKey(keyId: string, now: number, extra: readonly TransactItem[] = []): Promise<boolean> {
  return applied(
    writeWith(
      {
        Update: {
          TableName: tableName(),
          Key: keyKey(keyId),
          UpdateExpression: 'SET revokedAt = :now',
          ConditionExpression: 'attribute_exists(PK) AND attribute_not_exists(revokedAt)',
          ExpressionAttributeValues: { ':now': now },
        },
      },
      extra,
    ),
  );
}

/**
 * Restore a key to its owner's membership generation `gen` (an admin's `restoreKeys` on enable): it
 * works again while that generation is current. Never moves a key back to an older generation (a
 * restore that lost a race to a later one), never revives a revoked key or another owner's.
 */
export async function restoreApiKey(keyId: string, ownerId: string, gen: number): Promise<boolean> {
  return applied(
    db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keyKey(keyId),
        UpdateExpression: 'SET ownerGen = :gen REMOVE ownerDisabled',
        ConditionExpression:
          'attribute_exists(PK) AND attribute_not_exists(revokedAt) AND ownerId = :owner AND (attribute_not_exists(ownerGen) OR ownerGen <= :gen)',
        ExpressionAttributeValues: { ':gen': gen, ':owner': ownerId },
      }),
    ),
  );
}

/** Suspend (owner disabled) or reinstate a key; false when the key does not exist. Keys suspended before membership generations existed carry this flag. */
export async function setKeySuspended(keyId: string, suspended: boolean): Promise<boolean> {
  return applied(
    db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keyKey(keyId),
        UpdateExpression: suspended ? 'SET ownerDisabled = :true' : 'REMOVE ownerDisabled',
        ConditionExpression: 'attribute_exists(PK)',
        ...(suspended ? { ExpressionAttributeValues: { ':true': true } } : {}),
      }),
    ),
  );
}

/** The key item as stored now (a strongly consistent read). */
async function readKeyNow(keyId: string): Promise<ApiKey | undefined> {
  const { Item } = await db().send(new GetCommand({ TableName: tableName(), Key: keyKey(keyId), ConsistentRead: true }));
  return Item ? ApiKey.parse(Item) : undefined;
}

/**
 * Whether the key is live as stored now: it exists, is not revoked and its owner not suspended (the
 * v1 and approval routes, beside the rate-limit write: docs/performance.md "Caches"). A strongly
 * consistent read, so a key revoked or suspended in another function instance is refused at once
 * although this one has it cached; a read, not a write, so one key's busy requests take read units
 * (3,000 a second on one item) rather than write units (1,000), and its usage is counted apart.
 */
export async function keyIsLive(keyId: string): Promise<boolean> {
  const key = await readKeyNow(keyId);
  return key !== undefined && key.revokedAt === undefined && !key.ownerDisabled;
}

const LIVE = 'attribute_not_exists(revokedAt) AND attribute_not_exists(ownerDisabled)';

/**
 * Add `uses` made on `day` (yyyy-mm-dd, UTC) to the key's usage: total, today's count and last use,
 * on the key item itself (constant size). One write on the usual path; the first count of a UTC day
 * resets today's count with a second conditional write, and a count of an earlier day than the
 * item's (a late flush) adds to the total alone. With `live`, every write is conditional on the key
 * being live (not revoked, owner not disabled): false then, and nothing counted. False too when the
 * key no longer exists.
 */
async function addKeyUses(keyId: string, day: string, uses: number, lastUsedAt: number, live: boolean): Promise<boolean> {
  const values = { ':n': uses, ':now': lastUsedAt, ':day': day };
  const update = (expr: string, cond: string) =>
    applied(
      db().send(
        new UpdateCommand({
          TableName: tableName(),
          Key: keyKey(keyId),
          UpdateExpression: expr,
          ConditionExpression: `attribute_exists(PK) AND ${live ? `${LIVE} AND ` : ''}${cond}`,
          // DynamoDB refuses a value the expressions do not use.
          ExpressionAttributeValues: Object.fromEntries(Object.entries(values).filter(([v]) => `${expr} ${cond}`.includes(v))),
        }),
      ),
    );
  for (let attempt = 0; attempt < 3; attempt++) {
    if (await update('ADD usageTotal :n, usageToday :n SET lastUsedAt = :now', 'usageDay = :day')) return true;
    if (
      await update(
        'ADD usageTotal :n SET usageToday = :n, usageDay = :day, lastUsedAt = :now',
        '(attribute_not_exists(usageDay) OR usageDay < :day)',
      )
    )
      return true;
    if (await update('ADD usageTotal :n', 'usageDay > :day')) return true;
    // All three failed: the day turned between them, or the key is gone or no longer live.
    const key = await readKeyNow(keyId);
    if (!key || (live && (key.revokedAt !== undefined || key.ownerDisabled))) return false;
  }
  return true;
}

const dayOf = (now: number) => new Date(now).toISOString().slice(0, 10);

/**
 * Count one use at once, conditional on the key being live: false then, and nothing counted. (The
 * routes count a use with `countKeyUse` and check liveness with `keyIsLive`.)
 */
export const recordKeyUsage = (keyId: string, now: number): Promise<boolean> => addKeyUses(keyId, dayOf(now), 1, now, true);

/**
 * Count one use of a key that was checked already (a webhook trigger's bound key, a v1 or approval
 * route's key found live): summed in this
 * function instance and written at its next flush (`counters.ts`, docs/webhooks.md "Stats and key usage"), whether
 * or not the key was revoked since.
 */
export function countKeyUse(keyId: string, now: number): void {
  count(`KEY#${keyId}`, { [dayOf(now)]: 1 }, (days, last) => writeKeyUses(keyId, days, last ?? Date.now()), now);
}

async function writeKeyUses(keyId: string, days: ReadonlyMap<string, number>, lastUsedAt: number): Promise<void> {
  // Oldest day first, so the item's day only moves forward.
  for (const [day, uses] of [...days].sort(([a], [b]) => a.localeCompare(b))) await addKeyUses(keyId, day, uses, lastUsedAt, false);
}
