import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { type TransactItem, writeWith } from '../transact.ts';
import * as z from 'zod';
import { db, tableName } from '../../clients.ts';
import { isConditionFailure } from '../../errors.ts';
import { jsonText } from '../json.ts';
import { queryPage } from '../query.ts';
import { retentionTtl } from '../retention.ts';

// The delivery log: one item per outgoing message (an event notification to a target, an approval
// message to a person or channel), with every attempt. Written by the notifications worker only, never
// on a run's path. Access patterns: get by account + id (PK DLV#<account>#<id>, SK DELIVERY: a partition
// per delivery, so no account's log is a hot key, and a key family of its own, which the worker's IAM
// policy is limited to: DELIVERY_LOG_KEYS) · a run's
// deliveries, oldest first (GSI1: ACC#<account>#EX#<execution>#DLV / DLV#<id>) · an approval's
// (GSI2, only for deliveries of an approval: ACC#<account>#AP#<approval>#DLV / DLV#<id>). Ids sort by
// time, so both listings are in order. The index keys never change after the first write, so an
// attempt's update costs no index write.

export const DeliveryState = z.enum(['PENDING', 'DELIVERED', 'FAILED', 'SKIPPED']);
export type DeliveryState = z.infer<typeof DeliveryState>;

export const DeliveryAttempt = z.object({
  at: z.number(),
  /** The receiver's HTTP status, when it answered. */
  status: z.number().int().optional(),
  /** What went wrong, without secrets (hosts, not URLs). */
  error: z.string().optional(),
  durationMs: z.number(),
});
export type DeliveryAttempt = z.infer<typeof DeliveryAttempt>;

export const Delivery = z.object({
  deliveryId: z.string(),
  accountId: z.string(),
  executionId: z.string(),
  approvalId: z.string().optional(),
  /** The sender that makes it (`event`, `approval-message`, ...: shared/notifications/senders.ts). */
  kind: z.string(),
  /** How it travels: `webhook` for event notifications, `email` / `slack` / `teams` for approval messages. */
  channel: z.string(),
  /** Where it goes, as it may be shown: no secret, token or signature. */
  target: z.string(),
  state: DeliveryState,
  attempts: z.array(DeliveryAttempt),
  /** Attempts since it was (re)queued: the retry schedule counts these. */
  tries: z.number().int(),
  nextRetryAt: z.number().optional(),
  /** The provider's id of what was sent (a Slack message ts, an SES message id), when it gives one. */
  ref: z.string().optional(),
  createdAt: z.number(),
  updatedAt: z.number(),
  /** The queue message that sends it (its kind's payload), for a redelivery. Never shown. */
  message: jsonText(z.unknown()),
});
export type Delivery = z.infer<typeof Delivery>;

export const deliveryKey = (accountId: string, deliveryId: string) => ({ PK: `DLV#${accountId}#${deliveryId}`, SK: 'DELIVERY' });

const byExecution = (accountId: string, executionId: string) => `ACC#${accountId}#EX#${executionId}#DLV`;
const byApproval = (accountId: string, approvalId: string) => `ACC#${accountId}#AP#${approvalId}#DLV`;

export async function getDelivery(accountId: string, deliveryId: string): Promise<Delivery | undefined> {
  const { Item } = await db().send(
    new GetCommand({ TableName: tableName(), Key: deliveryKey(accountId, deliveryId), ConsistentRead: true }),
  );
  return Item ? Delivery.parse(Item) : undefined;
}

export type AttemptRecord = Pick<Delivery, 'deliveryId' | 'accountId' | 'executionId' | 'approvalId' | 'kind' | 'channel' | 'target'> & {
  message: unknown;
  attempt: DeliveryAttempt;
  tries: number;
  state: DeliveryState;
  nextRetryAt?: number;
  ref?: string;
};

/**
 * Record one attempt: creates the delivery on its first, appends to `attempts` after. One UpdateItem,
 * conditional on the delivery being new or PENDING (a duplicate queue message of a finished delivery
 * records nothing: false).
 */
export async function recordAttempt(r: AttemptRecord, now: number): Promise<boolean> {
  const created: Record<string, unknown> = {
    type: 'delivery',
    deliveryId: r.deliveryId,
    accountId: r.accountId,
    executionId: r.executionId,
    kind: r.kind,
    channel: r.channel,
    createdAt: now,
    message: JSON.stringify(r.message),
    GSI1PK: byExecution(r.accountId, r.executionId),
    GSI1SK: `DLV#${r.deliveryId}`,
    ...(r.approvalId ? { approvalId: r.approvalId, GSI2PK: byApproval(r.accountId, r.approvalId), GSI2SK: `DLV#${r.deliveryId}` } : {}),
  };
  const names: Record<string, string> = { '#state': 'state', '#attempts': 'attempts', '#ttl': 'ttl' };
  const values: Record<string, unknown> = {
    ':state': r.state,
    ':pending': 'PENDING',
    ':attempt': [r.attempt],
    ':empty': [],
    ':tries': r.tries,
    ':now': now,
    ':target': r.target,
    ':ttl': retentionTtl(now),
  };
  const sets = [
    '#state = :state',
    '#attempts = list_append(if_not_exists(#attempts, :empty), :attempt)',
    'tries = :tries',
    'updatedAt = :now',
    'target = :target',
    '#ttl = :ttl',
  ];
  Object.entries(created).forEach(([k, v], i) => {
    names[`#c${i}`] = k;
    values[`:c${i}`] = v;
    sets.push(`#c${i} = if_not_exists(#c${i}, :c${i})`);
  });
  if (r.ref !== undefined) {
    values[':ref'] = r.ref;
    sets.push('#ref = :ref');
    names['#ref'] = 'ref';
  }
  if (r.nextRetryAt !== undefined) {
    values[':next'] = r.nextRetryAt;
    sets.push('nextRetryAt = :next');
  }
  try {
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: deliveryKey(r.accountId, r.deliveryId),
        UpdateExpression: `SET ${sets.join(', ')}${r.nextRetryAt === undefined ? ' REMOVE nextRetryAt' : ''}`,
        ConditionExpression: 'attribute_not_exists(PK) OR #state = :pending',
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
      }),
    );
    return true;
  } catch (e) {
    if (isConditionFailure(e)) return false;
    throw e;
  }
}

/**
 * Queue it again: back to PENDING with a fresh retry schedule, conditional on the state it was read
 * in (false when it changed meanwhile). `undo` puts it back as it was, when the message could not be queued.
 */
export async function requeueDelivery(d: Delivery, now: number, undo = false, extra: readonly TransactItem[] = []): Promise<boolean> {
  const [from, to] = undo ? ['PENDING', d.state] : [d.state, 'PENDING'];
  try {
    await writeWith(
      {
        Update: {
          TableName: tableName(),
          Key: deliveryKey(d.accountId, d.deliveryId),
          UpdateExpression: undo
            ? `SET #state = :to, tries = :tries, updatedAt = :now${d.nextRetryAt === undefined ? ' REMOVE nextRetryAt' : ', nextRetryAt = :next'}`
            : 'SET #state = :to, tries = :zero, updatedAt = :now, nextRetryAt = :now',
          ConditionExpression: '#state = :from',
          ExpressionAttributeNames: { '#state': 'state' },
          ExpressionAttributeValues: {
            ':from': from,
            ':to': to,
            ':now': now,
            ...(undo ? { ':tries': d.tries, ...(d.nextRetryAt !== undefined ? { ':next': d.nextRetryAt } : {}) } : { ':zero': 0 }),
          },
        },
      },
      extra,
    );
    return true;
  } catch (e) {
    if (isConditionFailure(e)) return false;
    throw e;
  }
}

const page = (IndexName: 'GSI1' | 'GSI2', pk: string, limit: number, startKey?: Record<string, unknown>) =>
  queryPage(
    {
      IndexName,
      KeyConditionExpression: `${IndexName}PK = :pk`,
      ExpressionAttributeValues: { ':pk': pk },
    },
    (i) => Delivery.parse(i),
    limit,
    startKey,
  );

/** A run's deliveries, oldest first (one page). */
export const listExecutionDeliveries = (accountId: string, executionId: string, limit: number, startKey?: Record<string, unknown>) =>
  page('GSI1', byExecution(accountId, executionId), limit, startKey);

/** An approval's deliveries, oldest first (one page). */
export const listApprovalDeliveries = (accountId: string, approvalId: string, limit: number, startKey?: Record<string, unknown>) =>
  page('GSI2', byApproval(accountId, approvalId), limit, startKey);
