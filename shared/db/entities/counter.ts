import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '../../clients.ts';
import { isConditionFailure } from '../../errors.ts';

// Access pattern: one fixed-window counter item per subject and window (PK = subject,
// SK = WINDOW#<start>), removed by TTL after the window.

export type WindowResult = { allowed: boolean; count: number; limit: number; resetAt: number };

/**
 * Add one to `subject`'s count in the fixed window of `now`, only while the count is at most
 * `ceiling` (then nothing is written). The count after the write, or undefined when it was refused.
 */
async function countInWindow(subject: string, ceiling: number, windowSeconds: number, now: number): Promise<number | undefined> {
  const start = Math.floor(now / 1000 / windowSeconds) * windowSeconds;
  try {
    const { Attributes } = await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: windowKey(subject, windowSeconds, now),
        UpdateExpression: 'ADD #count :one SET #type = :type, #ttl = :ttl',
        ConditionExpression: 'attribute_not_exists(#count) OR #count <= :ceiling',
        ExpressionAttributeNames: { '#count': 'count', '#type': 'type', '#ttl': 'ttl' },
        ExpressionAttributeValues: { ':one': 1, ':ceiling': ceiling, ':type': 'window', ':ttl': start + windowSeconds + 60 },
        ReturnValues: 'UPDATED_NEW',
      }),
    );
    return Number(Attributes?.count);
  } catch (e) {
    if (isConditionFailure(e)) return undefined;
    throw e;
  }
}

/**
 * Atomically take one unit from `subject`'s budget for the current fixed window. The increment is
 * conditional on the count being under the limit, so concurrent callers can never be admitted past it.
 */
export async function takeFromWindow(subject: string, limit: number, windowSeconds: number, now: number): Promise<WindowResult> {
  const resetAt = Math.floor(now / 1000 / windowSeconds) * windowSeconds + windowSeconds;
  const count = await countInWindow(subject, limit - 1, windowSeconds, now);
  return count === undefined ? { allowed: false, count: limit, limit, resetAt } : { allowed: true, count, limit, resetAt };
}

/**
 * Count one unit in `subject`'s window of `now`, which stops counting one past `limit` (so it shows
 * a subject over its budget, and writes nothing more once it is). The count after this one; `limit + 1`
 * when it was over already.
 */
export async function countPastLimit(subject: string, limit: number, windowSeconds: number, now: number): Promise<number> {
  return (await countInWindow(subject, limit, windowSeconds, now)) ?? limit + 1;
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

// Two-window limits: the same items (one per subject and fixed window), read together with the
// previous window. A unit is taken only while the current window's count plus the whole previous
// window's count is under the limit. Any span of one window's length lies within two consecutive
// windows, so no span ever holds more than the limit: a burst at a window's end is not followed by a
// second full budget at the next window's start (as with fixed windows, twice the limit around the
// boundary). Units taken in a window count against the next one too: after a burst, room comes back
// at the end of the next window at the latest.

/** The prefix of every counter of failed authentication (a narrow grant may write these alone). */
export const authFailSubject = (...parts: string[]) => `AUTHFAIL#${parts.join('#')}`;

export type TwoWindowResult = { allowed: boolean; retryAfter: number };

const countOf = (item: Record<string, unknown> | undefined) => Number(item?.count ?? 0);

/** Seconds from `now` until a unit fits, given the current window's count `c` (refused: `c + p >= limit`). */
function secondsUntilRoom(c: number, limit: number, windowSeconds: number, now: number): number {
  const nowS = now / 1000;
  const start = Math.floor(nowS / windowSeconds) * windowSeconds;
  // The next window has room when this one's count is under the limit; else the one after.
  const at = start + (c < limit ? windowSeconds : 2 * windowSeconds);
  return Math.max(1, Math.ceil(at - nowS));
}

/** The current and previous windows' counts of `subject` (strongly consistent). */
async function windowCounts(subject: string, windowSeconds: number, now: number) {
  const current = windowKey(subject, windowSeconds, now);
  const previous = windowKey(subject, windowSeconds, now - windowSeconds * 1000);
  const [c, p] = await Promise.all(
    [current, previous].map((Key) => db().send(new GetCommand({ TableName: tableName(), Key, ConsistentRead: true }))),
  );
  return { c: countOf(c?.Item), p: countOf(p?.Item) };
}

/**
 * Atomically take one unit from `subject`'s two-window budget of `limit` units per `windowSeconds`:
 * the previous window's count is read (it no longer grows), and the current window's increment is
 * conditional on the sum staying within the limit, so concurrent callers can never be admitted past
 * it. Refused: the seconds until a unit fits.
 */
export async function takeFromTwoWindows(subject: string, limit: number, windowSeconds: number, now: number): Promise<TwoWindowResult> {
  const { c, p } = await windowCounts(subject, windowSeconds, now);
  const room = limit - p;
  const refused = (count: number) => ({ allowed: false, retryAfter: secondsUntilRoom(count, limit, windowSeconds, now) });
  if (c >= room) return refused(c);
  const key = windowKey(subject, windowSeconds, now);
  try {
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: key,
        UpdateExpression: 'ADD #count :one SET #type = :type, #ttl = :ttl',
        ConditionExpression: 'attribute_not_exists(#count) OR #count < :room',
        ExpressionAttributeNames: { '#count': 'count', '#type': 'type', '#ttl': 'ttl' },
        ExpressionAttributeValues: {
          ':one': 1,
          ':room': room,
          ':type': 'window',
          // Read as the previous window for one more window after its own.
          ':ttl': Number(key.SK.slice('WINDOW#'.length)) + 2 * windowSeconds + 60,
        },
      }),
    );
    return { allowed: true, retryAfter: 0 };
  } catch (e) {
    if (isConditionFailure(e)) return refused(Math.max(c + 1, room));
    throw e;
  }
}

/** Forget the current and previous windows of `subject` (a reset, as of `now`). */
export async function clearTwoWindows(subject: string, windowSeconds: number, now: number): Promise<void> {
  await Promise.all([clearWindow(subject, windowSeconds, now), clearWindow(subject, windowSeconds, now - windowSeconds * 1000)]);
}

/** Put a mark on `subject` that lasts `seconds` (a fact the limits remember, e.g. a known address). */
export async function putMark(subject: string, seconds: number, now: number): Promise<void> {
  await db().send(
    new PutCommand({ TableName: tableName(), Item: { PK: subject, SK: 'MARK', type: 'mark', ttl: Math.ceil(now / 1000) + seconds } }),
  );
}

/** Whether `subject` carries a mark that has not run out by `now`. */
export async function hasMark(subject: string, now: number): Promise<boolean> {
  const { Item } = await db().send(new GetCommand({ TableName: tableName(), Key: { PK: subject, SK: 'MARK' }, ConsistentRead: true }));
  return Item !== undefined && Number(Item.ttl) > now / 1000;
}
