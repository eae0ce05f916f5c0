import { DeleteCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '../../clients.ts';
import { isConditionFailure } from '../../errors.ts';

// Access pattern: get by session + form id (PK FORM#<sessionId>#<formId>, SK FORM); TTL: a day (a
// session lasts less). A console form whose answer must happen once (a key's token, a member's initial
// password) carries a fresh form id; its POST claims it before acting, so a browser's re-POST (a reload
// of the result page) is recognised and creates nothing.
export const FORM_ONCE_TTL_SECONDS = 24 * 3600;

const key = (sessionId: string, formId: string) => ({ PK: `FORM#${sessionId}#${formId}`, SK: 'FORM' });

/** Claim the form id for the session: false when it was claimed before (and has not expired). */
export async function claimForm(sessionId: string, formId: string, now = Date.now()): Promise<boolean> {
  const nowSeconds = Math.floor(now / 1000);
  try {
    await db().send(
      new PutCommand({
        TableName: tableName(),
        Item: { ...key(sessionId, formId), type: 'formOnce', createdAt: now, ttl: nowSeconds + FORM_ONCE_TTL_SECONDS },
        ConditionExpression: 'attribute_not_exists(PK) OR #ttl < :now',
        ExpressionAttributeNames: { '#ttl': 'ttl' },
        ExpressionAttributeValues: { ':now': nowSeconds },
      }),
    );
    return true;
  } catch (e) {
    if (isConditionFailure(e)) return false;
    throw e;
  }
}

/** Give the form id back (what it guarded failed: the form may be sent again). */
export async function releaseForm(sessionId: string, formId: string): Promise<void> {
  await db().send(new DeleteCommand({ TableName: tableName(), Key: key(sessionId, formId) }));
}
