import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { monotonicFactory } from 'ulid';
import * as z from 'zod';
import { db, tableName } from '../../clients.ts';
import { pooledRandom } from '../../ids.ts';
import { asJsonText, jsonText } from '../json.ts';
import { queryPage } from '../query.ts';
import { retentionTtl } from '../retention.ts';
import { buildUpdate, type Condition } from '../update.ts';
import type { EventType } from '../../engine/events.ts';

// Access patterns: get by account + id · list by account newest first (PK, SK begins_with EX#) ·
// list by workflow newest first (GSI1: ACC#<account>#WF#<workflow> / EX#<id>) · event log of a run,
// oldest first (PK ACC#<account>#EX#<id>, SK EV#<ulid>) · in-progress runs for the sweeps (GSI2, below).
export const ExecutionStatus = z.enum([
  'PENDING',
  'RUNNING',
  'WAITING_APPROVAL',
  'SUCCEEDED',
  'FAILED',
  'CANCELLED',
  'INTERRUPTED',
  'WAITING_CALLBACK',
]);
export type ExecutionStatus = z.infer<typeof ExecutionStatus>;
export const TERMINAL: readonly ExecutionStatus[] = ['SUCCEEDED', 'FAILED', 'CANCELLED'];
/** A run in one of these states is in progress: it is in the active index and a restart interrupts it. */
export const IN_PROGRESS: readonly ExecutionStatus[] = ['PENDING', 'RUNNING', 'WAITING_APPROVAL', 'WAITING_CALLBACK'];
export const Trigger = z.enum(['webhook', 'api', 'rerun', 'schedule']);

/** `status`: the HTTP status of an `http_request` that answered outside 2xx. */
export const RunError = z.object({ code: z.string(), message: z.string(), status: z.number().int().optional() });
export type RunError = z.infer<typeof RunError>;

const StepStateFields = {
  stepId: z.string(),
  type: z.string(),
  status: z.enum(['PENDING', 'RUNNING', 'SUCCEEDED', 'FAILED', 'SKIPPED', 'WAITING', 'CANCELLED']),
  startedAt: z.number().optional(),
  finishedAt: z.number().optional(),
  error: RunError.optional(),
  /** How many times the step was entered, when more than once (a retry re-enters the step that failed). */
  attempts: z.number().int().optional(),
  /** The attempt a step with a `retry` policy is in, past its first (`shared/engine/step-retry.ts`). */
  tries: z.number().int().optional(),
  /** A `switch`: the case taken (its index, or `default`) and the step it named. */
  branch: z.object({ case: z.union([z.number().int(), z.literal('default')]), next: z.string() }).optional(),
};
/** A `for_each`: how many items, which iteration it is in (0-based; `items` once done), its nested steps' states in that iteration. */
export const StepState = z.object({
  ...StepStateFields,
  items: z.number().int().optional(),
  iteration: z.number().int().optional(),
  steps: z.array(z.object(StepStateFields)).optional(),
});
export type StepState = z.infer<typeof StepState>;
export type NestedStepState = NonNullable<StepState['steps']>[number];

/**
 * Where a run is inside a `for_each` (the step at `nextStep`): its items (evaluated once, when the
 * loop started), the iteration, the nested step to run next, and the results of the iterations done.
 */
export const LoopPosition = z.object({
  stepId: z.string(),
  items: z.array(z.unknown()),
  iteration: z.number().int(),
  next: z.number().int(),
  results: z.array(z.unknown()),
});
export type LoopPosition = z.infer<typeof LoopPosition>;

/** `$trigger` of a webhook run, kept only when its workflow reads `$trigger`: the request's headers (no credentials) and the sender's event name. */
export const TriggerContext = z.object({ headers: z.record(z.string(), z.string()), event: z.string().optional() });
export type TriggerContext = z.infer<typeof TriggerContext>;

/** Fields holding user JSON, stored as text (see ../json.ts). */
const JSON_FIELDS = ['variables', 'outputs', 'output', 'payload', 'decision', 'report', 'loop', 'triggerContext'] as const;

/** Execution fields as stored: the JSON fields as text. Use for every write of those fields. */
export const storedFields = <T extends Record<string, unknown>>(fields: T): T => asJsonText(fields, JSON_FIELDS);

export const RunEvent = z.object({
  eventId: z.string(),
  type: z.string(),
  at: z.number(),
  executionId: z.string(),
  /** The run's sequence number of the event (`nextSeq`); absent only on events written before there were any. */
  seq: z.number().int().optional(),
  data: z.record(z.string(), z.unknown()),
});
export type RunEvent = z.infer<typeof RunEvent>;

/**
 * An approval decision recorded on the run that waited for it, for its worker to apply: the step's
 * output and the form values, or the failure it causes; and its event, for the notifications.
 */
export const RecordedDecision = z.object({
  approvalId: z.string(),
  stepId: z.string(),
  at: z.number(),
  output: z.object({
    decision: z.enum(['approve', 'reject']),
    comment: z.string().nullable(),
    decidedBy: z.string(),
    formData: z.record(z.string(), z.unknown()),
  }),
  fails: z.object({ code: z.enum(['APPROVAL_REJECTED', 'APPROVAL_EXPIRED']), message: z.string(), stepMessage: z.string() }).optional(),
  event: RunEvent,
});
export type RecordedDecision = z.infer<typeof RecordedDecision>;

/**
 * What ended a wait_for_callback (a report, the deadline), recorded on the run for its worker to
 * apply; a success's output stays on the callback item (the worker reads it there).
 */
export const RecordedReport = z.object({
  callbackId: z.string(),
  stepId: z.string(),
  at: z.number(),
  outcome: z.enum(['success', 'failure', 'timeout']),
  event: RunEvent,
});
export type RecordedReport = z.infer<typeof RecordedReport>;

export const Execution = z.object({
  executionId: z.string(),
  accountId: z.string(),
  workflowId: z.string(),
  webhookId: z.string().optional(),
  trigger: Trigger,
  status: ExecutionStatus,
  /**
   * The workflow version the run executes (an immutable item, `shared/engine/versions.ts`): later edits
   * do not change a run. Absent on a webhook run until the worker first picks it up; so are its steps
   * and the template's defaults.
   */
  workflowVersion: z.number().optional(),
  recovery: z.boolean(),
  variables: jsonText(z.record(z.string(), z.unknown())),
  outputs: jsonText(z.record(z.string(), z.unknown())),
  steps: z.array(StepState),
  /** Index of the next step to run (the step the run is in, while it runs, waits or loops). */
  nextStep: z.number(),
  /** Inside a `for_each` (the step at `nextStep`): where, see `LoopPosition`. */
  loop: jsonText(LoopPosition).optional(),
  /** Steps executed so far, kept only for a definition with control flow or `maxStepExecutions` (else `nextStep` tells). */
  executed: z.number().int().optional(),
  triggerContext: jsonText(TriggerContext).optional(),
  startedAt: z.number(),
  updatedAt: z.number(),
  finishedAt: z.number().optional(),
  startedBy: z.string().optional(),
  error: RunError.optional(),
  output: jsonText(z.unknown()).optional(),
  /** Id of the queue message that may claim the run next; claiming removes it (exactly-once claim). */
  dispatch: z.string().optional(),
  /**
   * The worker invocation that holds the run, until the end of that invocation's time (a Lambda
   * invocation cannot outlive its timeout): set by the claim, never extended, so checkpoints leave
   * the active index alone. Past `expiresAt` with the run still RUNNING, its worker died.
   */
  lease: z.object({ owner: z.string(), expiresAt: z.number() }).optional(),
  cancelRequested: z.boolean().optional(),
  cancelReason: z.string().optional(),
  approvalId: z.string().optional(),
  /** A decision on its approval that the run's worker has yet to apply. */
  decision: jsonText(RecordedDecision).optional(),
  wakeAt: z.number().optional(),
  /** The callback a WAITING_CALLBACK run waits for (`shared/db/entities/callback.ts`). */
  callbackId: z.string().optional(),
  /** What ended that wait, for the run's worker to apply. */
  report: jsonText(RecordedReport).optional(),
  rerunOf: z.string().optional(),
  /** The sequence number of the run's last event (`nextSeq`). */
  seq: z.number().int().optional(),
  /** How many times the run was retried from its failed step (`shared/engine/retry.ts`). */
  retries: z.number().int().optional(),
  interruptedAt: z.number().optional(),
  interruptReason: z.enum(['restart', 'crash']).optional(),
  idempotencyKey: z.string().optional(),
  /** Webhook runs: the request as received (for audit and manual rerun; never replayed). */
  payload: jsonText(z.unknown()).optional(),
  /** A large payload lives in the artifacts bucket under this key instead. */
  payloadRef: z.string().optional(),
  authMode: z.enum(['api_key', 'hmac', 'open']).optional(),
  keyId: z.string().optional(),
  sourceIp: z.string().optional(),
  /** Schedule runs: the schedule, the time the fire was due, and whether it was a manual fire (`POST /api/schedules/{id}/run`). */
  scheduleId: z.string().optional(),
  scheduledAt: z.number().optional(),
  manualFire: z.boolean().optional(),
});
export type Execution = z.infer<typeof Execution>;

export const executionKey = (accountId: string, executionId: string) => ({ PK: `ACC#${accountId}`, SK: `EX#${executionId}` });
const runPartition = (accountId: string, executionId: string) => `ACC#${accountId}#EX#${executionId}`;

/**
 * The active index (GSI2, sparse): every in-progress run, so the sweeps never scan. Partitions by
 * trigger kind (the startup sweep reads only the webhook runs) and by a shard of the id (a hot index
 * partition would throttle the base table's writes; raise ACTIVE_SHARDS past ~1,000 run updates a second per shard).
 * The sort key puts runs a worker holds under `L#<lease expiry>`, so the crash sweep reads only
 * expired leases, and every other in-progress run (pending, waiting, sleeping) under `W#`. It
 * changes when a worker claims or releases the run, never at a checkpoint (the lease is not extended).
 */
export const ACTIVE_SHARDS = 8;
export type ActiveKind = 'webhook' | 'api';
export const activeKind = (trigger: Execution['trigger']): ActiveKind => (trigger === 'webhook' ? 'webhook' : 'api');
const activePartition = (kind: ActiveKind, shard: number) => `RUN#ACTIVE#${kind}#${shard}`;
const shardOf = (executionId: string) => [...executionId.slice(-4)].reduce((n, c) => n + c.charCodeAt(0), 0) % ACTIVE_SHARDS;
const LEASED = 'L#';
const leaseSortKey = (expiresAt: number) => `${LEASED}${String(expiresAt).padStart(15, '0')}`;
/** GSI2SK: where the run sits in its active partition, from its lease. */
export const activeSortKey = (executionId: string, lease: Execution['lease']) =>
  lease ? `${leaseSortKey(lease.expiresAt)}#${executionId}` : `W#${executionId}`;
/** Both active-index attributes of an in-progress run. */
export const activeIndex = (e: Pick<Execution, 'executionId' | 'trigger' | 'lease'>) => ({
  GSI2PK: activePartition(activeKind(e.trigger), shardOf(e.executionId)),
  GSI2SK: activeSortKey(e.executionId, e.lease),
});
/** What a run that stops being in progress (finished, interrupted) removes. */
export const ACTIVE_INDEX_ATTRIBUTES = ['GSI2PK', 'GSI2SK'] as const;

/** One page of a shard of the active index: every run in it, or only leases that expired before `expiredBefore`. */
export const listActive = (
  kind: ActiveKind,
  shard: number,
  expiredBefore: number | undefined,
  limit: number,
  startKey?: Record<string, unknown>,
) =>
  queryPage(
    {
      IndexName: 'GSI2',
      KeyConditionExpression: expiredBefore === undefined ? 'GSI2PK = :pk' : 'GSI2PK = :pk AND GSI2SK BETWEEN :from AND :to',
      ExpressionAttributeValues: {
        ':pk': activePartition(kind, shard),
        ...(expiredBefore === undefined ? {} : { ':from': LEASED, ':to': leaseSortKey(expiredBefore) }),
      },
    },
    (i) => Execution.parse(i),
    limit,
    startKey,
  );

/** The condition of a write that must see the run exactly as it was read (every write changes `updatedAt`). */
export const unchangedSince = (e: Pick<Execution, 'status' | 'updatedAt'>): Condition => ({
  expression: '#status = :seen AND updatedAt = :updated',
  names: { '#status': 'status' },
  values: { ':seen': e.status, ':updated': e.updatedAt },
});

/** The condition of every write a worker makes while it holds the run: its lease, live, and no cancel asked for. */
export const heldBy = (owner: string, now: number): Condition => ({
  expression: '#status = :running AND #lease.#owner = :owner AND #lease.expiresAt > :now AND attribute_not_exists(cancelRequested)',
  names: { '#status': 'status', '#lease': 'lease', '#owner': 'owner' },
  values: { ':running': 'RUNNING', ':owner': owner, ':now': now },
});

/** What every write that finishes a run sets (the retention clock starts) and removes (it leaves the active index). */
export const finishing = (now: number) => ({
  set: { finishedAt: now, updatedAt: now, ttl: retentionTtl(now) },
  remove: ['dispatch', 'lease', 'wakeAt', 'approvalId', 'decision', 'callbackId', 'report', ...ACTIVE_INDEX_ATTRIBUTES],
});

/** The step a run is in (running or waiting; inside a loop, the nested one), else the next one. */
export function currentStepId(e: Pick<Execution, 'steps' | 'nextStep' | 'loop'>): string | null {
  const top = e.steps.find((s) => s.status === 'RUNNING' || s.status === 'WAITING') ?? e.steps[e.nextStep];
  const nested = e.loop && top?.stepId === e.loop.stepId ? top.steps?.[e.loop.next] : undefined;
  return nested?.stepId ?? top?.stepId ?? null;
}

const unfinished = (s: { status: string }) => s.status === 'PENDING' || s.status === 'RUNNING' || s.status === 'WAITING';

/** The fields of a run that ends CANCELLED (with one event, `nextSeq(e)`): its unfinished steps are cancelled with it. */
export const cancelledFields = (e: Execution, reason: string | undefined, now: number) => ({
  status: 'CANCELLED' as const,
  seq: nextSeq(e),
  cancelReason: reason,
  error: { code: 'CANCELLED', message: reason ? `Cancelled: ${reason}` : 'Cancelled.' },
  steps: e.steps.map((s) =>
    unfinished(s)
      ? {
          ...s,
          status: 'CANCELLED' as const,
          ...(s.steps ? { steps: s.steps.map((n) => (unfinished(n) ? { ...n, status: 'CANCELLED' as const } : n)) } : {}),
        }
      : s,
  ),
  ...finishing(now).set,
});

/** The update that ends a run CANCELLED, conditional on the state read. */
export const cancelledUpdate = (e: Execution, reason: string | undefined, now: number) =>
  buildUpdate(executionKey(e.accountId, e.executionId), cancelledFields(e, reason, now), finishing(now).remove, unchangedSince(e));

export const executionItem = (e: Execution) => ({
  ...executionKey(e.accountId, e.executionId),
  GSI1PK: `ACC#${e.accountId}#WF#${e.workflowId}`,
  GSI1SK: `EX#${e.executionId}`,
  ...(IN_PROGRESS.includes(e.status) ? activeIndex(e) : {}),
  type: 'execution',
  ...storedFields(e),
});

/** DynamoDB's item limit is 400 KB; keys, indexes and attribute names need some of it. */
export const MAX_EXECUTION_ITEM_BYTES = 380_000;
/** The stored size of an execution item (an upper bound of DynamoDB's own count). */
export const executionItemBytes = (e: Execution) => Buffer.byteLength(JSON.stringify(executionItem(e)));

export async function getExecution(accountId: string, executionId: string): Promise<Execution | undefined> {
  const { Item } = await db().send(
    new GetCommand({ TableName: tableName(), Key: executionKey(accountId, executionId), ConsistentRead: true }),
  );
  return Item ? Execution.parse(Item) : undefined;
}

export type ExecutionFilters = { workflowId?: string; status?: ExecutionStatus; trigger?: z.infer<typeof Trigger> };

export function listExecutions(accountId: string, f: ExecutionFilters, limit: number, startKey?: Record<string, unknown>) {
  const keep = (i: Record<string, unknown>) => (!f.status || i.status === f.status) && (!f.trigger || i.trigger === f.trigger);
  const byWorkflow = f.workflowId !== undefined;
  return queryPage(
    {
      ...(byWorkflow ? { IndexName: 'GSI1' } : {}),
      KeyConditionExpression: byWorkflow ? 'GSI1PK = :pk' : 'PK = :pk AND begins_with(SK, :sk)',
      ExpressionAttributeValues: byWorkflow
        ? { ':pk': `ACC#${accountId}#WF#${f.workflowId}` }
        : { ':pk': `ACC#${accountId}`, ':sk': 'EX#' },
      ScanIndexForward: false,
    },
    (i) => Execution.parse(i),
    limit,
    startKey,
    keep,
  );
}

const eventUlid = monotonicFactory(pooledRandom);

export function newEvent(executionId: string, type: EventType, data: Record<string, unknown> = {}, at = Date.now()): RunEvent {
  return { eventId: `ev_${eventUlid(at).toLowerCase()}`, type, at, executionId, data };
}

/**
 * Sequence numbers: every event of a run carries `seq`, increasing in the order the run wrote its
 * events and unique within the run, so a receiver can order what it gets (delivery order is not
 * promised). The run item keeps the last one (`seq`), and every write that appends events sets it in
 * the same write: no extra call. While a run waits for an approval, the numbers after its
 * `approval.requested` (S) are kept for the votes of a quorum, its reminders and its escalation
 * (`approvalEventSeq`: S + those written so far, at most 99 votes + 20 reminders + 1 escalation),
 * which are written beside the approval and never touch the run; whatever ends the wait (the
 * decision, an expiry, a cancel, an interruption) takes S + `VOTE_ROOM`.
 */
export const VOTE_ROOM = 128;

/**
 * The seq of an event written beside a waiting approval, from the approval as that write left it:
 * every such write (a vote, a reminder, the escalation) adds one to exactly one of these counts, and
 * DynamoDB applies one item's writes one at a time, so the numbers are unique and in write order.
 */
export const approvalEventSeq = (a: { runSeq?: number; approvals?: number; reminders?: number; escalatedAt?: number }) =>
  (a.runSeq ?? 0) + Math.min((a.approvals ?? 0) + (a.reminders ?? 0) + (a.escalatedAt !== undefined ? 1 : 0), VOTE_ROOM - 1);

/** The seq of the next event of a run in the state read. */
export const nextSeq = (e: Pick<Execution, 'seq' | 'status' | 'approvalId'>) =>
  (e.seq ?? 0) + (e.status === 'WAITING_APPROVAL' && e.approvalId !== undefined ? VOTE_ROOM : 1);

/** `events` numbered from `first` on, and the run's `seq` after them. */
export function sequenced(first: number, events: readonly RunEvent[]): { events: RunEvent[]; seq: number } {
  return { events: events.map((ev, i) => ({ ...ev, seq: first + i })), seq: first + events.length - 1 };
}

/**
 * A transaction (or batch) item appending events to a run's log: one item per step or transition,
 * holding its events in order (a step's `step.started` and `step.succeeded`, and the run's end when it
 * is the last). Kept `RETENTION_DAYS` after it was written.
 */
export const eventsPut = (accountId: string, events: readonly RunEvent[]) => {
  const [first] = events;
  if (!first) throw new Error('eventsPut needs at least one event');
  return {
    Put: {
      TableName: tableName(),
      Item: {
        PK: runPartition(accountId, first.executionId),
        SK: `EV#${first.eventId}`,
        type: 'events',
        accountId,
        events: JSON.stringify(events),
        ttl: retentionTtl(first.at),
      },
    },
  };
};

const itemEvents = (i: Record<string, unknown>): RunEvent[] =>
  // Items written before events were grouped hold one `event`.
  (i.events === undefined ? [JSON.parse(String(i.event))] : JSON.parse(String(i.events))).map((e: unknown) => RunEvent.parse(e));

/** Where a page of a run's log starts: at the item with sort key `sk` or after it, past its first `skip` events. */
type EventsStart = { sk: string; skip: number };
const isEventsStart = (v: Record<string, unknown> | undefined): v is EventsStart =>
  typeof v?.sk === 'string' && v.sk.startsWith('EV#') && Number.isInteger(v.skip) && (v.skip as number) >= 0;

/** A page of a run's log, oldest first: `limit` events, across items; `lastKey` (for the cursor) when more may follow. */
export async function listEvents(accountId: string, executionId: string, limit: number, start?: Record<string, unknown>) {
  let { sk, skip } = isEventsStart(start) ? start : { sk: 'EV#', skip: 0 };
  const items: RunEvent[] = [];
  for (;;) {
    const res = await db().send(
      new QueryCommand({
        TableName: tableName(),
        KeyConditionExpression: 'PK = :pk AND SK BETWEEN :from AND :to',
        ExpressionAttributeValues: { ':pk': runPartition(accountId, executionId), ':from': sk, ':to': 'EV$' },
        Limit: limit - items.length,
      }),
    );
    for (const item of res.Items ?? []) {
      const events = itemEvents(item).slice(skip);
      const room = limit - items.length;
      items.push(...events.slice(0, room));
      // Full: the next page starts inside this item, or just after it.
      if (events.length > room) return { items, lastKey: { sk: String(item.SK), skip: skip + room } };
      skip = 0;
      sk = `${String(item.SK)}\u0000`;
      if (items.length === limit) return { items, lastKey: res.LastEvaluatedKey || item !== res.Items?.at(-1) ? { sk, skip } : undefined };
    }
    if (!res.LastEvaluatedKey) return { items, lastKey: undefined };
  }
}

export { runPartition };
