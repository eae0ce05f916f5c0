import { GetCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import { db, tableName } from '../../clients.ts';

// Access pattern: get by account + scope + key (PK IDEM#<account>#<scope>#<key>, SK IDEM: a partition
// per key, so no account's keyed requests are one hot key); TTL 24 h.
export const IDEMPOTENCY_TTL_SECONDS = 24 * 3600;

export const IdempotencyRecord = z.object({ executionId: z.string(), requestHash: z.string(), createdAt: z.number() });
export type IdempotencyRecord = z.infer<typeof IdempotencyRecord>;

/** The scope a key is unique in (part of its item's key): each kind of request that takes one. */
export const idempotencyScope = {
  /** A schedule's fires (the key: the fire's time). */
  scheduleFire: (scheduleId: string) => `SCH#${scheduleId}`,
  /** A workflow's starts by the v1 API (`Idempotency-Key`). */
  workflowStart: (workflowId: string) => `WF#${workflowId}`,
  /** A webhook's requests with an `Idempotency-Key`. */
  webhookKey: (webhookId: string) => `WH#${webhookId}`,
  /** A webhook's requests with a sender's delivery id. */
  webhookDelivery: (webhookId: string) => `WHD#${webhookId}`,
  /** Replays of a webhook's recorded requests (`Idempotency-Key`): a scope of their own, never a sender's. */
  webhookReplay: (webhookId: string) => `WHR#${webhookId}`,
  /** A failed run's retries. */
  runRetry: (executionId: string) => `RETRY#${executionId}`,
};

const key = (accountId: string, scope: string, idemKey: string) => ({ PK: `IDEM#${accountId}#${scope}#${idemKey}`, SK: 'IDEM' });

/** Claims the key for a new execution, in the same transaction that creates it. */
export const idempotencyPut = (accountId: string, scope: string, idemKey: string, r: IdempotencyRecord) => ({
  Put: {
    TableName: tableName(),
    Item: { ...key(accountId, scope, idemKey), type: 'idempotency', ...r, ttl: Math.floor(r.createdAt / 1000) + IDEMPOTENCY_TTL_SECONDS },
    // An expired record that TTL has not removed yet may be taken over.
    ConditionExpression: 'attribute_not_exists(PK) OR #ttl < :now',
    ExpressionAttributeNames: { '#ttl': 'ttl' },
    ExpressionAttributeValues: { ':now': Math.floor(r.createdAt / 1000) },
  },
});

export async function getIdempotencyRecord(accountId: string, scope: string, idemKey: string): Promise<IdempotencyRecord | undefined> {
  const { Item } = await db().send(new GetCommand({ TableName: tableName(), Key: key(accountId, scope, idemKey), ConsistentRead: true }));
  return Item ? IdempotencyRecord.parse(Item) : undefined;
}

/** Frees the key of an execution that never started (its message could not be sent), in that transaction. */
export const idempotencyDelete = (accountId: string, scope: string, idemKey: string, executionId: string) => ({
  Delete: {
    TableName: tableName(),
    Key: key(accountId, scope, idemKey),
    ConditionExpression: 'executionId = :id',
    ExpressionAttributeValues: { ':id': executionId },
  },
});
