import { GetCommand, PutCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import { db, tableName } from '../../clients.ts';
import { applied } from '../update.ts';
import { isConditionFailure, isTransactionConflict } from '../../errors.ts';
import { queryAll } from '../query.ts';
import { genCondition, userKey } from './user.ts';

// Access patterns: get by id (global; the id is inside the token) · list by account, or by account
// and owner (GSI1: GSI1PK = ACC#<account>, GSI1SK = KEY#<owner>#<keyId>).
export const Scope = z.enum(['WORKFLOW_READ', 'WORKFLOW_EXECUTE', 'WEBHOOK_TRIGGER', 'APPROVAL_RESPOND']);
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
export async function putApiKeyOfActiveOwner(k: ApiKey, gen: number): Promise<boolean> {
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
        ],
      }),
    );
  // A membership change in flight on the user item (AWS reports the clash; nothing was written): again.
  for (let attempt = 1; ; attempt++) {
    try {
      return await applied(put());
    } catch (e) {
      if (!isTransactionConflict(e) || attempt === 3) throw e;
    }
  }
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

/** Keys of an account, or of one owner in it, newest first. */
export async function listApiKeys(accountId: string, ownerId?: string): Promise<ApiKey[]> {
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

/** Mark revoked; false when the key does not exist or was revoked already. */
export async function revokeApiKey(keyId: string, now: number): Promise<boolean> {
  return applied(
    db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keyKey(keyId),
        UpdateExpression: 'SET revokedAt = :now',
        ConditionExpression: 'attribute_exists(PK) AND attribute_not_exists(revokedAt)',
        ExpressionAttributeValues: { ':now': now },
      }),
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
 * Count one use: total, today's count and last use, on the key item itself (constant size). One write
 * on the usual path; the first use of a UTC day resets today's count with a second conditional write.
 * The write is conditional on the key being live (not revoked, owner not disabled), so a key revoked
 * or suspended in another function instance is refused at once although the key record is cached
 * there: returns false then (the caller refuses the request), at no cost on the usual path.
 */
export async function recordKeyUsage(keyId: string, now: number): Promise<boolean> {
  const day = new Date(now).toISOString().slice(0, 10);
  const update = (expr: string, cond: string) =>
    db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keyKey(keyId),
        UpdateExpression: expr,
        ConditionExpression: `attribute_exists(PK) AND attribute_not_exists(revokedAt) AND attribute_not_exists(ownerDisabled) AND ${cond}`,
        ExpressionAttributeValues: { ':one': 1, ':now': now, ':day': day },
      }),
    );
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      await update('ADD usageTotal :one, usageToday :one SET lastUsedAt = :now', 'usageDay = :day');
      return true;
    } catch (e) {
      if (!isConditionFailure(e)) throw e;
    }
    try {
      await update(
        'ADD usageTotal :one SET usageToday = :one, usageDay = :day, lastUsedAt = :now',
        '(attribute_not_exists(usageDay) OR usageDay <> :day)',
      );
      return true;
    } catch (e) {
      if (!isConditionFailure(e)) throw e;
    }
    // Both conditions failed: either the day turned between them, or the key is no longer live.
    const key = await readKeyNow(keyId);
    if (!key || key.revokedAt !== undefined || key.ownerDisabled) return false;
  }
  return true;
}
