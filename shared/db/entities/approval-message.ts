import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import { db, tableName } from '../../clients.ts';
import { retentionTtl } from '../retention.ts';
import { applied } from '../update.ts';
import { ChannelType } from '../channel-types.ts';
import { queryAll } from '../query.ts';

// Access patterns: every message sent for one approval (PK APMSG#<account>#<approval>, one item per
// notify entry and recipient), to skip those already sent on a retry and to update them all when
// the approval moves. Kept as long as the approval (retention).
export const ApprovalMessage = z.object({
  accountId: z.string(),
  approvalId: z.string(),
  /**
   * `<notify index>#<recipient>`: one message per step entry and recipient; a reminder's keys start
   * `r<n>#`, the escalation's `e#` (shared/notifications/send-plan.ts).
   */
  key: z.string(),
  channelId: z.string(),
  /** The channel's name when sent (for the delivery log; absent on messages sent before it was kept). */
  channelName: z.string().optional(),
  channelType: ChannelType,
  /** Where it was sent (a Slack conversation or user, a mail address, the Teams webhook). */
  to: z.string(),
  /** The reviewer it was sent to (a message of their own, with their links). */
  userId: z.string().optional(),
  ref: z.object({ channel: z.string().optional(), ts: z.string().optional(), messageId: z.string().optional() }),
  sentAt: z.number(),
  /** What the message shows since its last update: the approval's status and approvals. */
  shows: z.string().optional(),
});
export type ApprovalMessage = z.infer<typeof ApprovalMessage>;

const partition = (accountId: string, approvalId: string) => `APMSG#${accountId}#${approvalId}`;

/**
 * Record a sent message; false when another attempt recorded this one first. A redelivery's message
 * (`replace`) takes the place of the one sent before: it is the one kept up to date.
 */
export const putApprovalMessage = (m: ApprovalMessage, replace = false) =>
  applied(
    db().send(
      new PutCommand({
        TableName: tableName(),
        Item: { PK: partition(m.accountId, m.approvalId), SK: m.key, type: 'approvalMessage', ...m, ttl: retentionTtl(m.sentAt) },
        ...(replace ? {} : { ConditionExpression: 'attribute_not_exists(PK)' }),
      }),
    ),
  );

/** One sent message, by its key. */
export async function getApprovalMessage(accountId: string, approvalId: string, key: string): Promise<ApprovalMessage | undefined> {
  const { Item } = await db().send(
    new GetCommand({ TableName: tableName(), Key: { PK: partition(accountId, approvalId), SK: key }, ConsistentRead: true }),
  );
  return Item ? ApprovalMessage.parse(Item) : undefined;
}

export const listApprovalMessages = (accountId: string, approvalId: string) =>
  queryAll({ KeyConditionExpression: 'PK = :pk', ExpressionAttributeValues: { ':pk': partition(accountId, approvalId) } }, (i) =>
    ApprovalMessage.parse(i),
  );

/** Note what a message shows after an update (so a retried update does not post a Teams follow-up twice). */
export const markShown = (m: Pick<ApprovalMessage, 'accountId' | 'approvalId' | 'key'>, shows: string) =>
  db().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: { PK: partition(m.accountId, m.approvalId), SK: m.key },
      UpdateExpression: 'SET shows = :s',
      ExpressionAttributeValues: { ':s': shows },
    }),
  );

/** What a stored message's key says it was: the request, reminder n, or the escalation. */
export function messageKind(key: string): { kind: 'request' | 'reminder' | 'escalation'; reminder?: number } {
  const reminder = /^r(\d+)#/.exec(key);
  if (reminder) return { kind: 'reminder', reminder: Number(reminder[1]) };
  return key.startsWith('e#') ? { kind: 'escalation' } : { kind: 'request' };
}
