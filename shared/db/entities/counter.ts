import { DeleteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '../../clients.ts';
import { isConditionFailure } from '../../errors.ts';

// Access pattern: one fixed-window counter item per subject and window (PK = subject,
// SK = WINDOW#<start>), removed by TTL after the window.

export type WindowResult = { allowed: boolean; count: number; limit: number; resetAt: number };

/**
 * Atomically take one unit from `subject`'s budget for the current fixed window. The increment is
 * conditional on the count being under the limit, so concurrent callers can never be admitted past it.
 */
export async function takeFromWindow(subject: string, limit: number, windowSeconds: number, now: number): Promise<WindowResult> {
  const start = Math.floor(now / 1000 / windowSeconds) * windowSeconds;
  const resetAt = start + windowSeconds;
  try {
    const { Attributes } = await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: { PK: subject, SK: `WINDOW#${start}` },
        UpdateExpression: 'ADD #count :one SET #type = :type, #ttl = :ttl',
        ConditionExpression: 'attribute_not_exists(#count) OR #count < :limit',
        ExpressionAttributeNames: { '#count': 'count', '#type': 'type', '#ttl': 'ttl' },
        ExpressionAttributeValues: { ':one': 1, ':limit': limit, ':type': 'window', ':ttl': resetAt + 60 },
        ReturnValues: 'UPDATED_NEW',
      }),
    );
    return { allowed: true, count: Number(Attributes?.count ?? limit), limit, resetAt };
  } catch (e) {
    if (isConditionFailure(e)) return { allowed: false, count: limit, limit, resetAt };
    throw e;
  }
}

const windowKey = (subject: string, windowSeconds: number, now: number) => ({
  PK: subject,
  SK: `WINDOW#${Math.floor(now / 1000 / windowSeconds) * windowSeconds}`,
});

/** Give back one unit taken from the window of `now` (never below zero). */
export async function giveBack(subject: string, windowSeconds: number, now: number): Promise<void> {
  try {
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: windowKey(subject, windowSeconds, now),
        UpdateExpression: 'ADD #count :minus',
        ConditionExpression: '#count > :zero',
        ExpressionAttributeNames: { '#count': 'count' },
        ExpressionAttributeValues: { ':minus': -1, ':zero': 0 },
      }),
    );
  } catch (e) {
    if (!isConditionFailure(e)) throw e;
  }
}

/** Forget the window of `now` altogether (a reset). */
export async function clearWindow(subject: string, windowSeconds: number, now: number): Promise<void> {
  await db().send(new DeleteCommand({ TableName: tableName(), Key: windowKey(subject, windowSeconds, now) }));
}
