import { GetCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import { db, tableName } from '../../clients.ts';
import { type TransactItem, writeWith } from '../transact.ts';
import { applied } from '../update.ts';

// Access patterns: get by id (global; the id is inside the token). Expired sessions are refused on
// read and removed by TTL.
export const Session = z.object({
  sessionId: z.string(),
  tokenHash: z.string(),
  accountId: z.string(),
  userId: z.string(),
  createdAt: z.number(),
  expiresAt: z.number(),
  /** The user's membership generation at login (user.ts `gen`; absent is 0): the session works only while it is current. */
  userGen: z.number().optional(),
  /** The user's session epoch at login (user.ts `sessionEpoch`; absent is 0): the session works only while it is current. */
  userEpoch: z.number().optional(),
});
export type Session = z.infer<typeof Session>;

const sessionKey = (sessionId: string) => ({ PK: `SESSION#${sessionId}`, SK: 'SESSION' });

/** Put a new session (with `extra` in the same transaction: its audit entry). */
export async function putSession(s: Session, extra: readonly TransactItem[] = []): Promise<void> {
  await writeWith(
    {
      Put: {
        TableName: tableName(),
        Item: { ...sessionKey(s.sessionId), type: 'session', ...s, ttl: Math.ceil(s.expiresAt / 1000) },
        ConditionExpression: 'attribute_not_exists(PK)',
      },
    },
    extra,
  );
}

export async function getSession(sessionId: string): Promise<Session | undefined> {
  const { Item } = await db().send(new GetCommand({ TableName: tableName(), Key: sessionKey(sessionId) }));
  return Item ? Session.parse(Item) : undefined;
}

/** Delete a session (with `extra` in the same transaction); false when it was gone already (and nothing was written). */
export async function deleteSession(sessionId: string, extra: readonly TransactItem[] = []): Promise<boolean> {
  return applied(
    writeWith({ Delete: { TableName: tableName(), Key: sessionKey(sessionId), ConditionExpression: 'attribute_exists(PK)' } }, extra),
  );
}

/** Transaction item: move a live session to session epoch `epoch` (the one that survives a password change). */
export const keepSessionItem = (sessionId: string, epoch: number): TransactItem => ({
  Update: {
    TableName: tableName(),
    Key: sessionKey(sessionId),
    UpdateExpression: 'SET userEpoch = :epoch',
    ConditionExpression: 'attribute_exists(PK)',
    ExpressionAttributeValues: { ':epoch': epoch },
  },
});

/** Transaction item: delete a session (gone already is fine). */
export const deleteSessionItem = (sessionId: string): TransactItem => ({ Delete: { TableName: tableName(), Key: sessionKey(sessionId) } });
