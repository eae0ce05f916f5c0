import { GetCommand, QueryCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import { db, tableName } from '../../clients.ts';
import { isConditionFailure } from '../../errors.ts';
import { queryAll } from '../query.ts';

// Access patterns: get by id (global: the trigger URL carries only the id; PK WH#<id>, SK WEBHOOK) ·
// list an account's webhooks, or one creator's (GSI1: ACC#<account>#WH / USR#<creator>#WH#<id>) ·
// stats (PK WH#<id>, SK STATS) and 30 daily buckets (SK DAY#<yyyy-mm-dd>, TTL 35 days) ·
// the account's webhook count for plan limits (PK ACC#<account>, SK WEBHOOKS).
export const Webhook = z.object({
  webhookId: z.string(),
  accountId: z.string(),
  workflowId: z.string(),
  name: z.string(),
  apiKeyId: z.string().optional(),
  /** The HMAC shared secret. Stored as is (an HMAC needs the key itself); never returned or logged. */
  secretKey: z.string().optional(),
  variableMapping: z.record(z.string(), z.string()).optional(),
  allowedSourceIps: z.array(z.string()),
  enabled: z.boolean(),
  createdBy: z.string(),
  createdAt: z.number(),
  updatedAt: z.number(),
});
export type Webhook = z.infer<typeof Webhook>;

export const webhookKey = (webhookId: string) => ({ PK: `WH#${webhookId}`, SK: 'WEBHOOK' });
export const webhookCountKey = (accountId: string) => ({ PK: `ACC#${accountId}`, SK: 'WEBHOOKS' });
const statsKey = (webhookId: string) => ({ PK: `WH#${webhookId}`, SK: 'STATS' });
const dayKey = (webhookId: string, day: string) => ({ PK: `WH#${webhookId}`, SK: `DAY#${day}` });

export const webhookItem = (w: Webhook) => ({
  ...webhookKey(w.webhookId),
  GSI1PK: `ACC#${w.accountId}#WH`,
  GSI1SK: `USR#${w.createdBy}#WH#${w.webhookId}`,
  type: 'webhook',
  ...w,
});

export async function getWebhook(webhookId: string): Promise<Webhook | undefined> {
  const { Item } = await db().send(new GetCommand({ TableName: tableName(), Key: webhookKey(webhookId) }));
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

const DAY_TTL_SECONDS = 35 * 86_400;
const dayOf = (now: number) => new Date(now).toISOString().slice(0, 10);

/** Delete a webhook and take it off its account's count, together; false when it was gone already. */
export async function deleteWebhookItem(accountId: string, webhookId: string): Promise<boolean> {
  try {
    await db().send(
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
        ],
      }),
    );
    return true;
  } catch (e) {
    if (isConditionFailure(e)) return false;
    throw e;
  }
}

/**
 * Count one trigger in the webhook's totals and today's bucket: accepted, or refused with `status`.
 * Two atomic increments in parallel, never inside a transaction: every trigger of a webhook touches
 * these two items, and DynamoDB cancels concurrent transactions on one item (TransactionConflict),
 * which would fail concurrent triggers of a busy webhook.
 */
async function recordOutcome(webhookId: string, now: number, outcome: 'accepted' | number): Promise<void> {
  const accepted = outcome === 'accepted';
  await Promise.all([
    db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: statsKey(webhookId),
        UpdateExpression: `ADD #total :one, #outcome :one SET #type = :stats${accepted ? ', lastTriggeredAt = :now' : ''}`,
        ExpressionAttributeNames: { '#total': 'total', '#outcome': accepted ? 'accepted' : `rejected${outcome}`, '#type': 'type' },
        ExpressionAttributeValues: { ':one': 1, ':stats': 'webhookStats', ...(accepted ? { ':now': now } : {}) },
      }),
    ),
    db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: dayKey(webhookId, dayOf(now)),
        UpdateExpression: 'ADD #outcome :one SET #ttl = :ttl, #type = :day',
        ExpressionAttributeNames: { '#outcome': accepted ? 'accepted' : 'rejected', '#ttl': 'ttl', '#type': 'type' },
        ExpressionAttributeValues: { ':one': 1, ':ttl': Math.floor(now / 1000) + DAY_TTL_SECONDS, ':day': 'webhookDay' },
      }),
    ),
  ]);
}

export const recordAccepted = (webhookId: string, now: number) => recordOutcome(webhookId, now, 'accepted');
export const recordRejected = (webhookId: string, status: number, now: number) => recordOutcome(webhookId, now, status);

/** Totals, refusals by status, last trigger, and the last 30 days (oldest first, empty days as 0). */
export async function readStats(webhookId: string, now: number) {
  const from = dayOf(now - 29 * 86_400_000);
  const [{ Item }, days] = await Promise.all([
    db().send(new GetCommand({ TableName: tableName(), Key: statsKey(webhookId) })),
    db().send(
      new QueryCommand({
        TableName: tableName(),
        KeyConditionExpression: 'PK = :pk AND SK BETWEEN :from AND :to',
        ExpressionAttributeValues: { ':pk': `WH#${webhookId}`, ':from': `DAY#${from}`, ':to': `DAY#${dayOf(now)}` },
      }),
    ),
  ]);
  const byDay = new Map((days.Items ?? []).map((d) => [String(d.SK).slice(4), d]));
  const rejected = Object.fromEntries(
    Object.entries(Item ?? {})
      .filter(([k]) => /^rejected\d{3}$/.test(k))
      .map(([k, v]) => [k.slice(8), Number(v)]),
  );
  return {
    total: Number(Item?.total ?? 0),
    accepted: Number(Item?.accepted ?? 0),
    rejected,
    lastTriggeredAt: (Item?.lastTriggeredAt as number | undefined) ?? null,
    daily: Array.from({ length: 30 }, (_, i) => {
      const date = dayOf(now - (29 - i) * 86_400_000);
      const d = byDay.get(date);
      return { date, accepted: Number(d?.accepted ?? 0), rejected: Number(d?.rejected ?? 0) };
    }),
  };
}
