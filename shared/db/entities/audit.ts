import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { monotonicFactory } from 'ulid';
import * as z from 'zod';
import { db, tableName } from '../../clients.ts';
import { config } from '../../config.ts';
import { badRequest } from '../../errors.ts';
import { pooledRandom } from '../../ids.ts';
import { TABLE } from '../table.ts';
import { getItems, type Page } from '../query.ts';
import { shardOf } from '../shards.ts';

// The account audit log: one item per audited change, written in the same transaction as the change.
// Access patterns: an account's entries, newest first (PK = AUDIT#<account>#<shard>, SK = <ISO ms
// time>#<auditId>), and one actor's (GSI1: GSI1PK = AUDITBY#<account>#<userId>#<shard>, GSI1SK = SK);
// both write-sharded (an entry's shard: a hash of its id), so an account deciding approvals by API at
// a thousand a second puts no key over its share; a page reads the shards and merges them. A time
// range is a key condition on the sort key, an action or object a filter. Kept AUDIT_RETENTION_DAYS.

export const AUDIT_CHANNELS = ['console', 'api', 'cli', 'link', 'slack'] as const;
export const AuditChannel = z.enum(AUDIT_CHANNELS);
export type AuditChannel = z.infer<typeof AuditChannel>;

export const AuditActor = z.object({
  kind: z.enum(['user', 'key', 'anonymous', 'operator']),
  userId: z.string().optional(),
  keyId: z.string().optional(),
  email: z.string().optional(),
});
export type AuditActor = z.infer<typeof AuditActor>;

/**
 * Every action the log records, by object (docs/audit.md lists each: test/unit/audit-actions-documented.test.ts).
 * `audited` takes only these, so a new action is added here, and to the docs, before it can be written.
 */
export const AUDIT_ACTIONS = [
  'key.created',
  'key.revoked',
  'member.added',
  'member.updated',
  'member.disabled',
  'member.enabled',
  'member.removed',
  'password.changed',
  'password.change_failed',
  'session.signed_in',
  'session.sign_in_failed',
  'session.signed_out',
  'session.signed_out_everywhere',
  'workflow.created',
  'workflow.updated',
  'workflow.restored',
  'workflow.deleted',
  'webhook.created',
  'webhook.updated',
  'webhook.enabled',
  'webhook.disabled',
  'webhook.deleted',
  'webhook.request_replayed',
  'schedule.created',
  'schedule.updated',
  'schedule.paused',
  'schedule.resumed',
  'schedule.deleted',
  'schedule.run',
  'secret.created',
  'secret.updated',
  'secret.deleted',
  'channel.created',
  'channel.updated',
  'channel.deleted',
  'channel.tested',
  'approval.approved',
  'approval.rejected',
  'approval.refused',
  'run.started',
  'run.cancelled',
  'run.retried',
  'run.rerun',
  'run.resumed',
  'delivery.redelivered',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

export const AuditObject = z.object({
  type: z.string(),
  id: z.string(),
  name: z.string().optional(),
  version: z.number().optional(),
});
export type AuditObject = z.infer<typeof AuditObject>;

/** Small, flat-ish facts about the change: field names, scopes, role from/to. Never a secret value, token or password. */
export const AuditDetails = z.record(z.string(), z.unknown());

export const AuditEntry = z.object({
  auditId: z.string(),
  accountId: z.string(),
  /** Epoch ms. */
  at: z.number(),
  /** Dotted: `key.created`, `webhook.updated`, `session.sign_in_failed`... */
  action: z.string(),
  actor: AuditActor,
  channel: AuditChannel,
  ip: z.string().optional(),
  object: AuditObject,
  details: AuditDetails.optional(),
});
export type AuditEntry = z.infer<typeof AuditEntry>;

const ulid = monotonicFactory(pooledRandom);
/** Audit ids sort by time, also within one millisecond of one process. */
export const newAccountAuditId = (now: number) => `ae_${ulid(now).toLowerCase()}`;

/** Shards of an account's log and of each actor's: 2,000 write units a second spread below the heat gate's 500. */
export const AUDIT_SHARDS = 8;
export const auditPartition = (accountId: string, shard: number) => `AUDIT#${accountId}#${shard}`;
export const auditSortKey = (e: Pick<AuditEntry, 'at' | 'auditId'>) => `${new Date(e.at).toISOString()}#${e.auditId}`;
export const auditActorPartition = (accountId: string, userId: string, shard: number) => `AUDITBY#${accountId}#${userId}#${shard}`;

/** The TTL (epoch seconds) of an entry written at `at` (ms): AUDIT_RETENTION_DAYS later. */
export const auditTtl = (at: number) => Math.floor(at / 1000) + config().AUDIT_RETENTION_DAYS * 86_400;

/** The stored item: keys, `type: 'audit'`, the entry's fields, and the table's TTL attribute. */
export function auditItem(e: AuditEntry) {
  const SK = auditSortKey(e);
  const shard = shardOf(e.auditId, AUDIT_SHARDS);
  return {
    PK: auditPartition(e.accountId, shard),
    SK,
    // Sparse: an entry without a user (an anonymous failed sign-in, the operator) is in no one's list.
    ...(e.actor.userId ? { GSI1PK: auditActorPartition(e.accountId, e.actor.userId, shard), GSI1SK: SK } : {}),
    type: 'audit',
    ...e,
    [TABLE.ttlAttribute]: auditTtl(e.at),
  };
}

/** Transaction item: put the entry (never over another one). */
export const auditPut = (e: AuditEntry) => ({
  Put: { TableName: tableName(), Item: auditItem(AuditEntry.parse(e)), ConditionExpression: 'attribute_not_exists(PK)' },
});

export type AuditQuery = {
  accountId: string;
  /** One actor's entries (GSI1). */
  actor?: string;
  action?: string;
  objectType?: string;
  objectId?: string;
  /** Epoch ms, both inclusive. */
  from?: number;
  to?: number;
};

const iso = (ms: number) => new Date(ms).toISOString();
/** Past every `#<auditId>` of the same millisecond. */
const END = '#\uffff';

const invalidCursor = () => badRequest('INVALID_CURSOR', 'The cursor is invalid, tampered with, or from another query.');

/**
 * The matching entries, newest first: one page of at most `limit`, merged from the shards (a filtered
 * page may be shorter). Each shard is read for `limit` entries below the cursor (`before`: the sort key
 * of the last entry given); a shard that has more has been read down to its last key read, so the page
 * keeps only what is at or above the highest such key, and the next page starts below the page's last
 * entry (or that key, when the filter kept none): no entry twice, none left out.
 */
export async function listAuditEntries(q: AuditQuery, limit: number, startKey?: Record<string, unknown>): Promise<Page<AuditEntry>> {
  const given = startKey?.before;
  if (startKey !== undefined && (typeof given !== 'string' || given.length > 200)) throw invalidCursor();
  const before = typeof given === 'string' ? given : undefined;
  const byActor = q.actor !== undefined;
  const pk = byActor ? 'GSI1PK' : 'PK';
  const sk = byActor ? 'GSI1SK' : 'SK';
  const values: Record<string, unknown> = {};
  // The range: [from, to] and below the cursor (exclusive: its own entry is dropped where BETWEEN takes it).
  const to = q.to === undefined ? undefined : iso(q.to) + END;
  const upper: { value: string; strict: boolean } | undefined =
    before !== undefined && (to === undefined || before <= to)
      ? { value: before, strict: true }
      : to === undefined
        ? undefined
        : { value: to, strict: false };
  // Nothing lies between a lower bound above the upper one (a key condition refuses such a BETWEEN).
  if (q.from !== undefined && upper && iso(q.from) > upper.value) return { items: [] };
  let range = '';
  const between = q.from !== undefined && upper?.strict === true;
  if (q.from !== undefined && upper) {
    range = ` AND #sk BETWEEN :from AND :upper`;
    Object.assign(values, { ':from': iso(q.from), ':upper': upper.value });
  } else if (q.from !== undefined) {
    range = ' AND #sk >= :from';
    values[':from'] = iso(q.from);
  } else if (upper) {
    range = ` AND #sk ${upper.strict ? '<' : '<='} :upper`;
    values[':upper'] = upper.value;
  }
  const matches = (i: Record<string, unknown>) => {
    const o = i.object as AuditObject | undefined;
    return (
      (q.action === undefined || i.action === q.action) &&
      (q.objectType === undefined || o?.type === q.objectType) &&
      (q.objectId === undefined || o?.id === q.objectId)
    );
  };
  // The base table filters in the query; the index holds keys only, so its page is filtered once read.
  const filters: string[] = [];
  const names: Record<string, string> = { '#pk': pk, ...(range ? { '#sk': sk } : {}) };
  if (!byActor) {
    if (q.action !== undefined) {
      filters.push('#action = :action');
      names['#action'] = 'action';
      values[':action'] = q.action;
    }
    if (q.objectType !== undefined) {
      filters.push('#object.#type = :otype');
      Object.assign(names, { '#object': 'object', '#type': 'type' });
      values[':otype'] = q.objectType;
    }
    if (q.objectId !== undefined) {
      filters.push('#object.#id = :oid');
      Object.assign(names, { '#object': 'object', '#id': 'id' });
      values[':oid'] = q.objectId;
    }
  }
  const shards = Array.from({ length: AUDIT_SHARDS }, (_, s) => s);
  const answers = await Promise.all(
    shards.map(async (s) => {
      const res = await db().send(
        new QueryCommand({
          TableName: tableName(),
          ...(byActor ? { IndexName: 'GSI1' } : {}),
          KeyConditionExpression: `#pk = :pk${range}`,
          ...(filters.length ? { FilterExpression: filters.join(' AND ') } : {}),
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: {
            ...values,
            ':pk': byActor ? auditActorPartition(q.accountId, q.actor as string, s) : auditPartition(q.accountId, s),
          },
          ScanIndexForward: false,
          // BETWEEN takes the cursor's own entry (dropped below): one more, so a shard always reads past it.
          Limit: between ? limit + 1 : limit,
        }),
      );
      const readTo = res.LastEvaluatedKey?.[sk];
      return { found: res.Items ?? [], readTo: typeof readTo === 'string' ? readTo : undefined };
    }),
  );
  const cutoff = answers.reduce<string | undefined>(
    (c, a) => (a.readTo !== undefined && (c === undefined || a.readTo > c) ? a.readTo : c),
    undefined,
  );
  const found = answers
    .flatMap((a) => a.found)
    .filter((i) => i[sk] !== before && (cutoff === undefined || String(i[sk]) >= cutoff))
    .sort((x, y) => (String(x[sk]) < String(y[sk]) ? 1 : -1));
  const taken = found.slice(0, limit);
  const more = cutoff !== undefined || found.length > limit;
  const last = taken.length ? String(taken.at(-1)?.[sk]) : cutoff;
  const items = byActor ? (await getItems(taken.map((k) => ({ PK: String(k.PK), SK: String(k.SK) })))).filter(matches) : taken;
  return { items: items.map((i) => AuditEntry.parse(i)), ...(more && last !== undefined ? { lastKey: { before: last } } : {}) };
}
