import type { TransactItem } from '../transact.ts';
import { GetCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import { db, tableName } from '../../clients.ts';
import { applied } from '../update.ts';
import { count, flushCounts } from '../counters.ts';
import { queryAll } from '../query.ts';

// Access patterns: get by id (global: the trigger URL carries only the id; PK WH#<id>, SK WEBHOOK) ·
// list an account's webhooks, or one creator's (GSI1: ACC#<account>#WH / USR#<creator>#WH#<id>) ·
// stats (PK WH#<id>, SK STATS: totals, refusals by status, and a counter per day, `d<yyyymmdd>a|r`) ·
// the account's webhook count for plan limits (PK ACC#<account>, SK WEBHOOKS).
/** How an HMAC webhook's requests are signed (docs/webhooks.md "Webhook senders"); absent = `legacy-hmac`. */
export const SIGNATURE_SCHEMES = ['legacy-hmac', 'standard-webhooks', 'github', 'stripe', 'slack'] as const;
export type SignatureScheme = (typeof SIGNATURE_SCHEMES)[number];

export const Webhook = z.object({
  webhookId: z.string(),
  accountId: z.string(),
  workflowId: z.string(),
  name: z.string(),
  apiKeyId: z.string().optional(),
  /** The HMAC shared secret. Stored as is (an HMAC needs the key itself); never returned or logged. */
  secretKey: z.string().optional(),
  signatureScheme: z.enum(SIGNATURE_SCHEMES).optional(),
  variableMapping: z.record(z.string(), z.string()).optional(),
  allowedSourceIps: z.array(z.string()),
  enabled: z.boolean(),
  createdBy: z.string(),
  createdAt: z.number(),
  updatedAt: z.number(),
  /** Its workflow reads `$trigger`: its runs keep the request's context (`shared/domain/trigger-context.ts`). */
  triggerContext: z.boolean().optional(),
});
export type Webhook = z.infer<typeof Webhook>;

/** How a webhook's triggers authenticate: its bound key, an HMAC of the body, or nothing. */
export const authMode = (w: Pick<Webhook, 'apiKeyId' | 'secretKey'>) => (w.apiKeyId ? 'api_key' : w.secretKey ? 'hmac' : 'open');

/** The scheme a webhook's requests are signed by; none for a key-bound or open webhook. */
export const signedBy = (w: Pick<Webhook, 'apiKeyId' | 'secretKey' | 'signatureScheme'>): SignatureScheme | undefined =>
  authMode(w) === 'hmac' ? (w.signatureScheme ?? 'legacy-hmac') : undefined;

export const webhookKey = (webhookId: string) => ({ PK: `WH#${webhookId}`, SK: 'WEBHOOK' });
export const webhookCountKey = (accountId: string) => ({ PK: `ACC#${accountId}`, SK: 'WEBHOOKS' });
const statsKey = (webhookId: string) => ({ PK: `WH#${webhookId}`, SK: 'STATS' });

export const webhookItem = (w: Webhook) => ({
  ...webhookKey(w.webhookId),
  GSI1PK: `ACC#${w.accountId}#WH`,
  GSI1SK: `USR#${w.createdBy}#WH#${w.webhookId}`,
  type: 'webhook',
  ...w,
});

/**
 * Transaction items of a new webhook: it counts on its account's count of webhooks (refused at
 * `limit`, when there is one), and its item is new.
 */
export const newWebhookItems = (w: Webhook, limit: number | undefined): TransactItem[] => [
  {
    Update: {
      TableName: tableName(),
      Key: webhookCountKey(w.accountId),
      UpdateExpression: 'ADD #n :one SET #type = :type',
      ...(limit !== undefined ? { ConditionExpression: 'attribute_not_exists(#n) OR #n < :limit' } : {}),
      ExpressionAttributeNames: { '#n': 'count', '#type': 'type' },
      ExpressionAttributeValues: { ':one': 1, ':type': 'webhookCount', ...(limit !== undefined ? { ':limit': limit } : {}) },
    },
  },
  { Put: { TableName: tableName(), Item: webhookItem(w), ConditionExpression: 'attribute_not_exists(PK)' } },
];

/** Transaction item: the webhook becomes `next`, refused when it changed since it was read at `seenUpdatedAt` (or is gone). */
export const replaceWebhookItem = (next: Webhook, seenUpdatedAt: number): TransactItem => ({
  Put: {
    TableName: tableName(),
    Item: webhookItem(next),
    ConditionExpression: 'updatedAt = :seen',
    ExpressionAttributeValues: { ':seen': seenUpdatedAt },
  },
});

/** Record whether the webhook's workflow reads `$trigger` (`triggerContext`); a webhook deleted meanwhile is left alone. */
export async function setTriggerContext(webhookId: string, reads: boolean): Promise<void> {
  await applied(
    db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: webhookKey(webhookId),
        UpdateExpression: reads ? 'SET triggerContext = :t' : 'REMOVE triggerContext',
        ConditionExpression: 'attribute_exists(PK)',
        ...(reads ? { ExpressionAttributeValues: { ':t': true } } : {}),
      }),
    ),
  );
}

export async function getWebhook(webhookId: string, consistent = false): Promise<Webhook | undefined> {
  const { Item } = await db().send(new GetCommand({ TableName: tableName(), Key: webhookKey(webhookId), ConsistentRead: consistent }));
  return Item ? Webhook.parse(Item) : undefined;
}

export const listWebhooks = (accountId: string, createdBy?: string) =>
  queryAll(
    {
      IndexName: 'GSI1',
      KeyConditionExpression: 'GSI1PK = :pk AND begins_with(GSI1SK, :sk)',
      ExpressionAttributeValues: { ':pk': `ACC#${accountId}#WH`, ':sk': createdBy ? `USR#${createdBy}#` : 'USR#' },
    },
    (i) => Webhook.parse(i),
  );

const DAY_MS = 86_400_000;
const dayOf = (now: number) => new Date(now).toISOString().slice(0, 10);
/** A day's counter on the stats item: `d20261126a` (accepted) or `d20261126r` (refused). */
const dayCounter = (now: number, accepted: boolean) => `d${dayOf(now).replaceAll('-', '')}${accepted ? 'a' : 'r'}`;
const DAY_COUNTER = /^d(\d{4})(\d{2})(\d{2})([ar])$/;
/** Days kept: the stats show 30; each count also drops the counters of days 31 to 40 ago. */
const DAYS_SHOWN = 30;
const DAYS_DROPPED = 10;

/** Delete a webhook and take it off its account's count, together; false when it was gone already. */
export async function deleteWebhookItem(accountId: string, webhookId: string, extra: readonly TransactItem[] = []): Promise<boolean> {
  return applied(
    db().send(
      new TransactWriteCommand({
        TransactItems: [
          { Delete: { TableName: tableName(), Key: webhookKey(webhookId), ConditionExpression: 'attribute_exists(PK)' } },
          {
            Update: {
              TableName: tableName(),
              Key: webhookCountKey(accountId),
              UpdateExpression: 'ADD #n :minus',
              ConditionExpression: '#n > :zero',
              ExpressionAttributeNames: { '#n': 'count' },
              ExpressionAttributeValues: { ':minus': -1, ':zero': 0 },
            },
          },
          ...extra,
        ],
      }),
    ),
  );
}

/**
 * Write a webhook's summed trigger counts (`counters.ts`): its totals, its statuses and its days' counters,
 * all on one item in one atomic update (never inside a transaction: every trigger of a webhook
 * touches this item, and DynamoDB cancels concurrent transactions on one item). The same update drops
 * the counters of the days that left the 30 shown, so the item stays small.
 */
async function writeStats(webhookId: string, counts: ReadonlyMap<string, number>, lastAccepted: number | undefined): Promise<void> {
  const now = Date.now();
  const dropped = Array.from({ length: DAYS_DROPPED }, (_, i) => now - (DAYS_SHOWN + i) * DAY_MS).flatMap((t) => [
    dayCounter(t, true),
    dayCounter(t, false),
  ]);
  const added = [...counts];
  await db().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: statsKey(webhookId),
      UpdateExpression: `ADD ${added.map((_, i) => `#a${i} :a${i}`).join(', ')} SET #type = :stats${lastAccepted === undefined ? '' : ', lastTriggeredAt = :last'} REMOVE ${dropped.map((_, i) => `#x${i}`).join(', ')}`,
      ExpressionAttributeNames: {
        '#type': 'type',
        ...Object.fromEntries(added.map(([name], i) => [`#a${i}`, name])),
        ...Object.fromEntries(dropped.map((name, i) => [`#x${i}`, name])),
      },
      ExpressionAttributeValues: {
        ':stats': 'webhookStats',
        ...Object.fromEntries(added.map(([, n], i) => [`:a${i}`, n])),
        ...(lastAccepted === undefined ? {} : { ':last': lastAccepted }),
      },
    }),
  );
}

/**
 * Count one trigger in the webhook's stats: its total, its status and its day. Summed in this
 * function instance and written at its next flush (`counters.ts`, docs/webhooks.md "Stats and key usage").
 */
function countOutcome(webhookId: string, now: number, outcome: 'accepted' | number): void {
  const accepted = outcome === 'accepted';
  count(
    `WH#${webhookId}#STATS`,
    { total: 1, [accepted ? 'accepted' : `rejected${outcome}`]: 1, [dayCounter(now, accepted)]: 1 },
    (counts, last) => writeStats(webhookId, counts, last),
    accepted ? now : undefined,
  );
}

export const countAccepted = (webhookId: string, now: number) => countOutcome(webhookId, now, 'accepted');
export const countRejected = (webhookId: string, status: number, now: number) => countOutcome(webhookId, now, status);

/**
 * Totals, refusals by status, last trigger, and the last 30 days (oldest first, empty days as 0).
 * This instance's own counts are written first (none on AWS, where the stats route has a function of
 * its own; all of them in local mode, where one process runs every function).
 */
export async function readStats(webhookId: string, now: number) {
  await flushCounts();
  const { Item = {} } = await db().send(new GetCommand({ TableName: tableName(), Key: statsKey(webhookId) }));
  const rejected = Object.fromEntries(
    Object.entries(Item)
      .filter(([k]) => /^rejected\d{3}$/.test(k))
      .map(([k, v]) => [k.slice(8), Number(v)]),
  );
  const days = new Map<string, { accepted: number; rejected: number }>();
  for (const [k, v] of Object.entries(Item)) {
    const m = DAY_COUNTER.exec(k);
    if (!m) continue;
    const date = `${m[1]}-${m[2]}-${m[3]}`;
    const day = days.get(date) ?? { accepted: 0, rejected: 0 };
    day[m[4] === 'a' ? 'accepted' : 'rejected'] = Number(v);
    days.set(date, day);
  }
  return {
    total: Number(Item.total ?? 0),
    accepted: Number(Item.accepted ?? 0),
    rejected,
    lastTriggeredAt: (Item.lastTriggeredAt as number | undefined) ?? null,
    daily: Array.from({ length: DAYS_SHOWN }, (_, i) => {
      const date = dayOf(now - (DAYS_SHOWN - 1 - i) * DAY_MS);
      return { date, ...(days.get(date) ?? { accepted: 0, rejected: 0 }) };
    }),
  };
}
