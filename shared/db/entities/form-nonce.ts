import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '../../clients.ts';
import { applied } from '../update.ts';

// Access pattern: get by account + nonce (PK FORMNONCE#<account>#<nonce>, SK NONCE; a partition per
// nonce); TTL a day. A console form that creates something carries a fresh nonce; the POST claims it
// before it creates, so the same form sent twice (a reload of its result page) creates once.
export const FORM_NONCE_TTL_SECONDS = 24 * 3600;

const key = (accountId: string, nonce: string) => ({ PK: `FORMNONCE#${accountId}#${nonce}`, SK: 'NONCE' });

/** Claim `nonce` for `userId`; false when it was claimed already (and its day has not passed). */
export function claimFormNonce(accountId: string, nonce: string, userId: string, now: number): Promise<boolean> {
  const nowSeconds = Math.floor(now / 1000);
  return applied(
    db().send(
      new PutCommand({
        TableName: tableName(),
        Item: { ...key(accountId, nonce), type: 'formNonce', userId, createdAt: now, ttl: nowSeconds + FORM_NONCE_TTL_SECONDS },
        ConditionExpression: 'attribute_not_exists(PK) OR #ttl < :now',
        ExpressionAttributeNames: { '#ttl': 'ttl' },
        ExpressionAttributeValues: { ':now': nowSeconds },
      }),
    ),
  );
}

/** Record what the form created under its nonce (a reload then names it). */
export async function settleFormNonce(accountId: string, nonce: string, objectId: string): Promise<void> {
  await db().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: key(accountId, nonce),
      UpdateExpression: 'SET objectId = :id',
      ExpressionAttributeValues: { ':id': objectId },
    }),
  );
}

/** Give a nonce back (the form was refused: nothing was created, it may be sent again). */
export async function releaseFormNonce(accountId: string, nonce: string): Promise<void> {
  await db().send(new DeleteCommand({ TableName: tableName(), Key: key(accountId, nonce) }));
}

/** What the nonce's form created, if it did. */
export async function formNonceObject(accountId: string, nonce: string): Promise<string | undefined> {
  const { Item } = await db().send(new GetCommand({ TableName: tableName(), Key: key(accountId, nonce), ConsistentRead: true }));
  return typeof Item?.objectId === 'string' ? Item.objectId : undefined;
}
