import { monotonicFactory } from 'ulid';
import * as z from 'zod';
import { tableName } from '../../clients.ts';
import { config } from '../../config.ts';
import { pooledRandom } from '../../ids.ts';
import { TABLE } from '../table.ts';
import { type Page, queryPage } from '../query.ts';

// The account audit log: one item per audited change, written in the same transaction as the change.
// Access patterns: an account's entries, newest first (PK = AUDIT#<account>, SK = <ISO ms time>#<auditId>),
// and one actor's (GSI1: GSI1PK = AUDITBY#<account>#<userId>, GSI1SK = SK); a time range is a key
// condition on the sort key, an action or object a filter. Kept AUDIT_RETENTION_DAYS (the table's TTL).

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

export const auditPartition = (accountId: string) => `AUDIT#${accountId}`;
export const auditSortKey = (e: Pick<AuditEntry, 'at' | 'auditId'>) => `${new Date(e.at).toISOString()}#${e.auditId}`;
export const auditActorPartition = (accountId: string, userId: string) => `AUDITBY#${accountId}#${userId}`;

/** The TTL (epoch seconds) of an entry written at `at` (ms): AUDIT_RETENTION_DAYS later. */
export const auditTtl = (at: number) => Math.floor(at / 1000) + config().AUDIT_RETENTION_DAYS * 86_400;

/** The stored item: keys, `type: 'audit'`, the entry's fields, and the table's TTL attribute. */
export function auditItem(e: AuditEntry) {
  const SK = auditSortKey(e);
  return {
    PK: auditPartition(e.accountId),
    SK,
    // Sparse: an entry without a user (an anonymous failed sign-in, the operator) is in no one's list.
    ...(e.actor.userId ? { GSI1PK: auditActorPartition(e.accountId, e.actor.userId), GSI1SK: SK } : {}),
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

/** The matching entries, newest first: one page of at most `limit` items read (a filtered page may be shorter). */
export function listAuditEntries(q: AuditQuery, limit: number, startKey?: Record<string, unknown>): Promise<Page<AuditEntry>> {
  const byActor = q.actor !== undefined;
  const pk = byActor ? 'GSI1PK' : 'PK';
  const sk = byActor ? 'GSI1SK' : 'SK';
  const values: Record<string, unknown> = {
    ':pk': byActor ? auditActorPartition(q.accountId, q.actor as string) : auditPartition(q.accountId),
  };
  let range = '';
  if (q.from !== undefined && q.to !== undefined) {
    range = ` AND ${sk} BETWEEN :from AND :to`;
    Object.assign(values, { ':from': iso(q.from), ':to': iso(q.to) + END });
  } else if (q.from !== undefined) {
    range = ` AND ${sk} >= :from`;
    values[':from'] = iso(q.from);
  } else if (q.to !== undefined) {
    range = ` AND ${sk} <= :to`;
    values[':to'] = iso(q.to) + END;
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
  const names: Record<string, string> = {};
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
  return queryPage(
    {
      ...(byActor ? { IndexName: 'GSI1' } : {}),
      KeyConditionExpression: `${pk} = :pk${range}`,
      ...(filters.length ? { FilterExpression: filters.join(' AND '), ExpressionAttributeNames: names } : {}),
      ExpressionAttributeValues: values,
      ScanIndexForward: false,
    },
    (i) => AuditEntry.parse(i),
    limit,
    startKey,
    byActor ? matches : undefined,
  );
}
