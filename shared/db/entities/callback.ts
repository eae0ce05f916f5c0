import * as z from 'zod';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '../../clients.ts';
import { jsonText } from '../json.ts';
import { readMoving } from '../migrations/move.ts';
import { callbackMoveTo, oldCallbackKey } from '../migrations/shapes.ts';
import { queryPage } from '../query.ts';
import { sweepPartition, sweepPartitions } from '../sweep-shards.ts';
import { retentionTtl } from '../retention.ts';
import { buildUpdate, type Condition } from '../update.ts';

// Access patterns: get by account + id (PK CB#<account>#<id>, SK CALLBACK: a partition per callback,
// as every run waiting for one makes one; kept under ACC#<account> / CB#<id> before the upgrade:
// `callbackMove`, and a get that misses looks there until the migration has run) · pending callbacks by deadline
// for the scheduled sweep (GSI2: CALLBACK#DEADLINE#<shard> / <deadline>#<account>#<id>, sparse: a callback
// leaves it when it is handled). A callback is an approval for machines: one conditional write
// (PENDING → the outcome) decides it, whoever comes first (a report, the sweep, a cancel).
export const CallbackStatus = z.enum(['PENDING', 'SUCCEEDED', 'FAILED', 'TIMED_OUT', 'CANCELLED']);
export type CallbackStatus = z.infer<typeof CallbackStatus>;

export const CallbackError = z.object({
  code: z
    .string()
    .min(1)
    .max(64)
    .regex(/^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$/, 'must be UPPER_SNAKE'),
  message: z.string().max(1000),
});

export const Callback = z.object({
  callbackId: z.string(),
  accountId: z.string(),
  executionId: z.string(),
  workflowId: z.string(),
  stepId: z.string(),
  status: CallbackStatus,
  /** SHA-256 of the one token that may report (`shared/tokens.ts`); the token itself is never stored. */
  tokenHash: z.string(),
  onTimeout: z.enum(['fail', 'continue']),
  /** The wait's end (ms). */
  timeoutAt: z.number(),
  /** A heartbeat is due within this many seconds of the last one (or of the start). */
  heartbeatSeconds: z.number().optional(),
  /** When the wait ends unless reported (or, with heartbeats, beaten): the earlier of the timeout and the next heartbeat's due time. */
  deadline: z.number(),
  lastHeartbeatAt: z.number().optional(),
  createdAt: z.number(),
  reportedAt: z.number().optional(),
  /** A success's output (≤ 256 KiB): kept here, not on the run, whose item holds its own state. */
  output: jsonText(z.record(z.string(), z.unknown())).optional(),
  error: CallbackError.optional(),
  /** The seq of the run's `callback.requested`: what ends the wait is numbered next. */
  runSeq: z.number().int().optional(),
});
export type Callback = z.infer<typeof Callback>;

export const callbackKey = (accountId: string, callbackId: string) => ({ PK: `CB#${accountId}#${callbackId}`, SK: 'CALLBACK' });

const DEADLINES = 'CALLBACK#DEADLINE';
/** The deadline index's partition of a callback: one of SWEEP_SHARDS by its id (`shared/db/sweep-shards.ts`). */
const deadlinePartition = (callbackId: string) => sweepPartition(DEADLINES, callbackId);
/** Every partition the deadline sweep reads: the shards, and the unsharded one of before the upgrade. */
export const DEADLINE_PARTITIONS = sweepPartitions(DEADLINES);
const deadlineSortKey = (c: Pick<Callback, 'accountId' | 'callbackId' | 'deadline'>) =>
  `${String(c.deadline).padStart(15, '0')}#${c.accountId}#${c.callbackId}`;
const DEADLINE_INDEX_ATTRIBUTES = ['GSI2PK', 'GSI2SK'];

export const callbackPut = (c: Callback) => ({
  Put: {
    TableName: tableName(),
    Item: {
      ...callbackKey(c.accountId, c.callbackId),
      GSI2PK: deadlinePartition(c.callbackId),
      GSI2SK: deadlineSortKey(c),
      type: 'callback',
      ...c,
    },
    ConditionExpression: 'attribute_not_exists(PK)',
  },
});

/** The callback, read consistently (one of the shape before the upgrade is moved first: `readMoving`). */
export async function getCallback(accountId: string, callbackId: string): Promise<Callback | undefined> {
  const item = await readMoving(callbackKey(accountId, callbackId), oldCallbackKey(accountId, callbackId), callbackMove);
  return item ? Callback.parse(item) : undefined;
}

/** Callbacks of the shape before the upgrade (./migrations/shapes.ts): moved to their own keys as the migration or a read finds them. */
export const callbackMove = /* @__PURE__ */ callbackMoveTo({ callbackKey, deadlinePartition });

/**
 * Pending callbacks of one deadline partition whose deadline is before `now`, earliest first (one
 * page). Those of the unsharded partition of before the upgrade are moved to their own keys as they are read.
 */
export async function listDueCallbacks(partition: string, now: number, limit: number) {
  const page = await queryPage(
    {
      IndexName: 'GSI2',
      KeyConditionExpression: 'GSI2PK = :pk AND GSI2SK < :now',
      ExpressionAttributeValues: { ':pk': partition, ':now': String(now).padStart(15, '0') },
    },
    (i) => Callback.parse(i),
    limit,
  );
  if (partition !== DEADLINES) return page;
  const current = await Promise.all(page.items.map((c) => getCallback(c.accountId, c.callbackId)));
  return { ...page, items: current.filter((c): c is Callback => c !== undefined) };
}

const pending = (also?: Condition): Condition => ({
  expression: `#status = :pending${also ? ` AND (${also.expression})` : ''}`,
  names: { '#status': 'status', ...also?.names },
  values: { ':pending': 'PENDING', ...also?.values },
});

/**
 * A callback leaves PENDING (reported, timed out, cancelled): it leaves the deadline index and its
 * retention clock starts. Conditional on PENDING (and `also`), so exactly one outcome wins.
 */
export const handledCallbackUpdate = (
  c: Pick<Callback, 'accountId' | 'callbackId'>,
  fields: Partial<Callback> & { status: CallbackStatus },
  now: number,
  also?: Condition,
) =>
  buildUpdate(
    callbackKey(c.accountId, c.callbackId),
    {
      ...fields,
      ...(fields.output ? { output: JSON.stringify(fields.output) } : {}),
      reportedAt: now,
      ttl: retentionTtl(now),
    },
    DEADLINE_INDEX_ATTRIBUTES,
    pending(also),
  );

/** The condition of the sweep's write: the deadline it saw (a heartbeat since moves it). */
export const deadlineUnchanged = (deadline: number): Condition => ({
  expression: 'deadline = :seenDeadline',
  values: { ':seenDeadline': deadline },
});

/**
 * Record a heartbeat of the pending callback: the next one is due `heartbeatSeconds` from now (never
 * past the timeout). The new deadline; refused (a condition failure) when the callback is not PENDING.
 */
export async function recordHeartbeat(c: Callback, now: number): Promise<number> {
  const deadline = c.heartbeatSeconds === undefined ? c.timeoutAt : Math.min(c.timeoutAt, now + c.heartbeatSeconds * 1000);
  await db().send(
    new UpdateCommand(
      buildUpdate(
        callbackKey(c.accountId, c.callbackId),
        { lastHeartbeatAt: now, deadline, GSI2PK: deadlinePartition(c.callbackId), GSI2SK: deadlineSortKey({ ...c, deadline }) },
        [],
        pending(),
      ),
    ),
  );
  return deadline;
}

/** The run waits again after a resume: what ends the wait is numbered after `execution.resumed`. */
export const callbackRunSeqUpdate = (c: Pick<Callback, 'accountId' | 'callbackId'>, runSeq: number) =>
  buildUpdate(callbackKey(c.accountId, c.callbackId), { runSeq }, [], pending());

/** The callback update that cancels a pending callback with its run. */
export const cancelCallbackUpdate = (accountId: string, callbackId: string, now: number) =>
  handledCallbackUpdate({ accountId, callbackId }, { status: 'CANCELLED' }, now);
