import { monotonicFactory } from 'ulid';
import * as z from 'zod';
import { AuditChannel } from './audit.ts';
import { pooledRandom } from '../../ids.ts';
import { CHANNEL_TYPES } from '../channel-types.ts';
import { jsonText } from '../json.ts';
import { retentionTtl } from '../retention.ts';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '../../clients.ts';
import { applied, buildUpdate, type Condition } from '../update.ts';
import { readMoving } from '../migrations/move.ts';
import { approvalMoveTo, oldApprovalKey } from '../migrations/shapes.ts';
import { queryAll, queryPage } from '../query.ts';
import { listShards, shardedPage, shardKeys, shardOf } from '../shards.ts';
import { sweepPartition, sweepPartitions } from '../sweep-shards.ts';

// Access patterns: get by account + id (PK AP#<account>#<id>, SK APPROVAL: a partition per approval,
// as every run makes one) · list an account's approvals by status, oldest first (GSI1, write-sharded:
// ACC#<account>#AP#<status>#<shard> / AP#<id>, `shared/db/shards.ts`, pages merged across the shards).
// Before the upgrade approvals were kept under their account (ACC#<account> / AP#<id>, listed under
// ACC#<account>#AP#<status>): `approvalMove` moves them, and until the migration has run a get that
// misses the new key looks there (and moves what it finds), the listing and the expiry sweep read the
// unsharded partitions too.
export const ApprovalStatus = z.enum(['PENDING', 'APPROVED', 'REJECTED', 'EXPIRED', 'CANCELLED']);
export type ApprovalStatus = z.infer<typeof ApprovalStatus>;

export const FormField = z.object({
  name: z.string(),
  type: z.enum(['string', 'number', 'boolean']),
  label: z.string().optional(),
  required: z.boolean(),
  default: z.unknown().optional(),
  enum: z.array(z.unknown()).optional(),
});

export const ApprovalLoop = z.object({ stepId: z.string(), index: z.number().int(), item: z.unknown() });

export const Approval = z.object({
  approvalId: z.string(),
  accountId: z.string(),
  executionId: z.string(),
  workflowId: z.string(),
  stepId: z.string(),
  status: ApprovalStatus,
  title: z.string(),
  description: z.string().optional(),
  reviewers: z.array(z.string()),
  /** The form with its defaults evaluated when the approval was created. */
  form: z.array(FormField).optional(),
  onTimeout: z.enum(['fail', 'approve', 'reject']),
  onReject: z.enum(['fail', 'continue']),
  expiresAt: z.number().optional(),
  createdAt: z.number(),
  decision: z.enum(['approve', 'reject']).optional(),
  comment: z.string().optional(),
  decidedBy: z.string().optional(),
  decidedAt: z.number().optional(),
  /** The form values an approval applied (the audit keeps what was sent and what was edited). */
  formData: jsonText(z.record(z.string(), z.unknown())).optional(),
  /** The seq of the run's `approval.requested`: the votes' events are numbered after it (`VOTE_ROOM` in ./execution.ts). */
  runSeq: z.number().int().optional(),
  /** The run's workflow version (its notification targets, for the events of a quorum's votes). */
  workflowVersion: z.number().optional(),
  /** A quorum: distinct reviewers who must approve (absent: 1). The fields below count its votes. */
  minApprovals: z.number().optional(),
  /** Approving votes so far (a quorum's), and who cast them. */
  approvals: z.number().optional(),
  approvedBy: z.array(z.string()).optional(),
  /** The last approving vote: what moves the run once the quorum is reached (see `shared/domain/quorum.ts`). */
  lastApproval: jsonText(
    z.object({
      audit: z.lazy(() => AuditRecord),
      formData: z.record(z.string(), z.unknown()).optional(),
      /** The account audit log's channel of the vote (shared/domain/audit.ts `decisionAudit`). */
      via: AuditChannel.optional(),
    }),
  ).optional(),
  /** The step's `remind`: `reminders` sent so far, the next one due at `nextRemindAt` (`shared/domain/nudges.ts`). */
  remind: z.object({ everySeconds: z.number(), max: z.number() }).optional(),
  reminders: z.number().int().optional(),
  nextRemindAt: z.number().optional(),
  /** The step's `escalate`: its `reviewers` join at `at`; `escalatedAt` once they did. */
  escalate: z.object({ at: z.number(), reviewers: z.array(z.string()) }).optional(),
  escalatedAt: z.number().optional(),
  /** An approval inside a `for_each`: the loop step, the iteration's index and item (one approval per iteration). */
  loop: jsonText(ApprovalLoop).optional(),
});
export type Approval = z.infer<typeof Approval>;

export const approvalKey = (accountId: string, approvalId: string) => ({ PK: `AP#${accountId}#${approvalId}`, SK: 'APPROVAL' });

/**
 * The status listing's shards: its PENDING entry is put and removed in a transaction each (4 write
 * units an approval), so it takes more than a run's listing: at least 16 (heat (b): 1,000 approvals a
 * second, 250 units a shard), LIST_SHARDS when that is more. It may only grow, as LIST_SHARDS.
 */
const statusShards = () => Math.max(16, listShards());
const byStatus = (accountId: string, status: ApprovalStatus) => `ACC#${accountId}#AP#${status}`;
export const approvalIndex = (accountId: string, status: ApprovalStatus, approvalId: string) => ({
  GSI1PK: `${byStatus(accountId, status)}#${shardOf(approvalId, statusShards())}`,
  GSI1SK: `AP#${approvalId}`,
});

/**
 * Pending approvals with a deadline are listed by deadline (GSI2) for the expiry sweep, in
 * SWEEP_SHARDS partitions by the approval's id (`APPROVAL#EXPIRY#<shard>`, each in deadline order).
 */
const EXPIRY = 'APPROVAL#EXPIRY';
export const expiryIndex = (a: Pick<Approval, 'approvalId' | 'accountId' | 'expiresAt'>) =>
  a.expiresAt === undefined
    ? {}
    : { GSI2PK: sweepPartition(EXPIRY, a.approvalId), GSI2SK: `${String(a.expiresAt).padStart(15, '0')}#${a.accountId}#${a.approvalId}` };
/** Attributes a decided approval drops, leaving the expiry index. */
export const EXPIRY_INDEX_ATTRIBUTES = ['GSI2PK', 'GSI2SK'];
/** Every partition the expiry sweep reads: the shards, and the unsharded one of before the upgrade. */
export const EXPIRY_PARTITIONS = sweepPartitions(EXPIRY);

/**
 * Pending approvals of one expiry partition whose deadline is before `now`, earliest first (one page).
 * Those of the unsharded partition of before the upgrade are moved to their own keys as they are read.
 */
export async function listExpired(partition: string, now: number, limit: number) {
  const page = await queryPage(
    {
      IndexName: 'GSI2',
      KeyConditionExpression: 'GSI2PK = :pk AND GSI2SK < :now',
      ExpressionAttributeValues: { ':pk': partition, ':now': String(now).padStart(15, '0') },
    },
    (i) => Approval.parse(i),
    limit,
  );
  if (partition !== EXPIRY) return page;
  const current = await Promise.all(page.items.map((a) => getApproval(a.accountId, a.approvalId)));
  return { ...page, items: current.filter((a): a is Approval => a !== undefined) };
}

/**
 * An approval leaves PENDING (decided, expired, cancelled): its listing moves to the new status, it
 * leaves the expiry index, and its retention clock starts. Conditional on PENDING, so one decision wins.
 */
export const handledUpdate = (
  accountId: string,
  approvalId: string,
  fields: Record<string, unknown> & { status: ApprovalStatus },
  now: number,
  also?: Condition,
) =>
  buildUpdate(
    approvalKey(accountId, approvalId),
    { ...fields, ...approvalIndex(accountId, fields.status, approvalId), ttl: retentionTtl(now) },
    EXPIRY_INDEX_ATTRIBUTES,
    {
      expression: `#status = :pending${also ? ` AND (${also.expression})` : ''}`,
      names: { '#status': 'status', ...also?.names },
      values: { ':pending': 'PENDING', ...also?.values },
    },
  );

/**
 * The condition of a write that ends a quorum approval other than by its quorum (a rejection, its
 * deadline): no quorum reached yet. A quorum reached is the last approver's to apply.
 */
/** Take an approval decided meanwhile out of the expiry index (a no-op while it is PENDING, or when it is gone). */
export const leaveExpiryIndex = (accountId: string, approvalId: string) =>
  applied(
    db().send(
      new UpdateCommand(
        buildUpdate(approvalKey(accountId, approvalId), {}, EXPIRY_INDEX_ATTRIBUTES, {
          expression: '#status <> :pending',
          names: { '#status': 'status' },
          values: { ':pending': 'PENDING' },
        }),
      ),
    ),
  );

/** The run waits again after a resume: the votes still to come are numbered after `execution.resumed` (while PENDING). */
export const approvalRunSeqUpdate = (a: Pick<Approval, 'accountId' | 'approvalId'>, runSeq: number) =>
  buildUpdate(approvalKey(a.accountId, a.approvalId), { runSeq }, [], {
    expression: '#status = :pending',
    names: { '#status': 'status' },
    values: { ':pending': 'PENDING' },
  });

export const QUORUM_OPEN: Condition = {
  expression: 'attribute_not_exists(#qa) OR #qa < #qm',
  names: { '#qa': 'approvals', '#qm': 'minApprovals' },
};

/** The approval update that cancels a pending approval with its run. */
export const cancelApprovalUpdate = (accountId: string, approvalId: string, now: number) =>
  handledUpdate(accountId, approvalId, { status: 'CANCELLED', decidedAt: now }, now);

export const approvalPut = (a: Approval) => ({
  Put: {
    TableName: tableName(),
    Item: {
      ...approvalKey(a.accountId, a.approvalId),
      ...approvalIndex(a.accountId, a.status, a.approvalId),
      ...expiryIndex(a),
      type: 'approval',
      ...a,
      ...(a.loop ? { loop: JSON.stringify(a.loop) } : {}),
    },
    ConditionExpression: 'attribute_not_exists(PK)',
  },
});

/** The approval, read consistently (one of the shape before the upgrade is moved first: `readMoving`). */
export async function getApproval(accountId: string, approvalId: string): Promise<Approval | undefined> {
  const item = await readMoving(approvalKey(accountId, approvalId), oldApprovalKey(accountId, approvalId), approvalMove);
  return item ? Approval.parse(item) : undefined;
}

/** Approvals of the shape before the upgrade (./migrations/shapes.ts): moved to their own keys as the migration or a read finds them. */
export const approvalMove = /* @__PURE__ */ approvalMoveTo({ approvalKey, approvalIndex, expiryIndex });

/** One decision or refused attempt on an approval (who, how, from where, with what). */
export const AuditRecord = z.object({
  auditId: z.string(),
  approvalId: z.string(),
  accountId: z.string(),
  at: z.number(),
  outcome: z.enum(['decided', 'refused']),
  /** For refusals: the status and code answered. */
  status: z.number().optional(),
  code: z.string().optional(),
  decision: z.enum(['approve', 'reject']).optional(),
  comment: z.string().optional(),
  userId: z.string().optional(),
  keyId: z.string().optional(),
  channel: z.enum(['post', 'link', 'v1', 'console', 'timeout', ...CHANNEL_TYPES]),
  sourceIp: z.string().optional(),
  userAgent: z.string().optional(),
  /** v1 approvals with a form: the defaults shown and the values submitted. */
  form: z.object({ original: z.record(z.string(), z.unknown()), edited: z.record(z.string(), z.unknown()) }).optional(),
});
export type AuditRecord = z.infer<typeof AuditRecord>;

const auditUlid = monotonicFactory(pooledRandom);
/** Audit ids sort by time, also within one millisecond of one process. */
export const newAuditId = (now: number) => `au_${auditUlid(now).toLowerCase()}`;

const auditPartition = (accountId: string, approvalId: string) => `ACC#${accountId}#AP#${approvalId}`;

export const auditPut = (r: AuditRecord) => ({
  Put: {
    TableName: tableName(),
    Item: { PK: auditPartition(r.accountId, r.approvalId), SK: `AUDIT#${r.auditId}`, type: 'audit', ...r, ttl: retentionTtl(r.at) },
  },
});

export const listAudit = (accountId: string, approvalId: string) =>
  queryAll(
    {
      KeyConditionExpression: 'PK = :pk AND begins_with(SK, :sk)',
      ExpressionAttributeValues: { ':pk': auditPartition(accountId, approvalId), ':sk': 'AUDIT#' },
    },
    (i) => AuditRecord.parse(i),
  );

/**
 * An account's approvals in one status, oldest first: a page merged across the status listing's
 * shards, and the unsharded listing of before the upgrade (until the migration has emptied it).
 */
export const listApprovalsByStatus = (accountId: string, status: ApprovalStatus, limit: number, startKey?: Record<string, unknown>) =>
  shardedPage(
    {
      index: 'GSI1',
      partitionKey: 'GSI1PK',
      sortKey: 'GSI1SK',
      partitions: [byStatus(accountId, status), ...shardKeys(byStatus(accountId, status), statusShards())],
      oldestFirst: true,
    },
    (i) => Approval.parse(i),
    limit,
    startKey,
  );
