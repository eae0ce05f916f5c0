import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { monotonicFactory } from 'ulid';
import * as z from 'zod';
import { db, tableName } from '../../clients.ts';
import { StoredDefinition } from '../../engine/definition.ts';
import { asJsonText, jsonText } from '../json.ts';
import { queryPage } from '../query.ts';

// Access patterns: get by account + id · list by account newest first (PK, SK begins_with EX#) ·
// list by workflow newest first (GSI1: ACC#<account>#WF#<workflow> / EX#<id>) · event log of a run,
// oldest first (PK ACC#<account>#EX#<id>, SK EV#<ulid>) · in-progress runs for the sweeps (GSI2, below).
export const ExecutionStatus = z.enum(['PENDING', 'RUNNING', 'WAITING_APPROVAL', 'SUCCEEDED', 'FAILED', 'CANCELLED', 'INTERRUPTED']);
export type ExecutionStatus = z.infer<typeof ExecutionStatus>;
export const TERMINAL: readonly ExecutionStatus[] = ['SUCCEEDED', 'FAILED', 'CANCELLED'];
/** A run in one of these states is in progress: it is in the active index and a restart interrupts it. */
export const IN_PROGRESS: readonly ExecutionStatus[] = ['PENDING', 'RUNNING', 'WAITING_APPROVAL'];
export const Trigger = z.enum(['webhook', 'api', 'rerun']);

export const RunError = z.object({ code: z.string(), message: z.string() });
export type RunError = z.infer<typeof RunError>;

export const StepState = z.object({
  stepId: z.string(),
  type: z.string(),
  status: z.enum(['PENDING', 'RUNNING', 'SUCCEEDED', 'FAILED', 'SKIPPED', 'WAITING', 'CANCELLED']),
  startedAt: z.number().optional(),
  finishedAt: z.number().optional(),
  error: RunError.optional(),
});
export type StepState = z.infer<typeof StepState>;

/** Fields holding user JSON, stored as text (see ../json.ts). */
const JSON_FIELDS = ['definition', 'variables', 'outputs', 'output', 'payload'] as const;

/** Execution fields as stored: the JSON fields as text. Use for every write of those fields. */
export const storedFields = <T extends Record<string, unknown>>(fields: T): T => asJsonText(fields, JSON_FIELDS);

export const Execution = z.object({
  executionId: z.string(),
  accountId: z.string(),
  workflowId: z.string(),
  webhookId: z.string().optional(),
  trigger: Trigger,
  status: ExecutionStatus,
  /**
   * The definition as it was when the run started: later edits do not change a run. Absent on a
   * webhook run until the worker first picks it up (`resolveRun`); so are its steps and defaults.
   */
  definition: jsonText(StoredDefinition).optional(),
  recovery: z.boolean(),
  variables: jsonText(z.record(z.string(), z.unknown())),
  outputs: jsonText(z.record(z.string(), z.unknown())),
  steps: z.array(StepState),
  /** Index of the next step to run. */
  nextStep: z.number(),
  startedAt: z.number(),
  updatedAt: z.number(),
  finishedAt: z.number().optional(),
  startedBy: z.string().optional(),
  error: RunError.optional(),
  output: jsonText(z.unknown()).optional(),
  /** Id of the queue message that may claim the run next; claiming removes it (exactly-once claim). */
  dispatch: z.string().optional(),
  lease: z.object({ owner: z.string(), expiresAt: z.number() }).optional(),
  cancelRequested: z.boolean().optional(),
  cancelReason: z.string().optional(),
  approvalId: z.string().optional(),
  wakeAt: z.number().optional(),
  rerunOf: z.string().optional(),
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
});
export type Execution = z.infer<typeof Execution>;

export const executionKey = (accountId: string, executionId: string) => ({ PK: `ACC#${accountId}`, SK: `EX#${executionId}` });
const runPartition = (accountId: string, executionId: string) => `ACC#${accountId}#EX#${executionId}`;

/**
 * The active index (GSI2, sparse): every in-progress run, so the sweeps never scan. Partitions by
 * trigger kind (the startup sweep reads only the webhook runs) and by a shard of the id (a hot index
 * partition would throttle the base table's writes; raise ACTIVE_SHARDS past ~1,000 run updates a second per shard).
 * The sort key puts runs a worker holds under `L#<lease expiry>`, so the crash sweep reads only
 * expired leases, and every other in-progress run (pending, waiting, sleeping) under `W#`.
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
  const filters = [f.status && '#status = :status', f.trigger && '#trigger = :trigger'].filter(Boolean).join(' AND ');
  const byWorkflow = f.workflowId !== undefined;
  return queryPage(
    {
      ...(byWorkflow ? { IndexName: 'GSI1' } : {}),
      KeyConditionExpression: byWorkflow ? 'GSI1PK = :pk' : 'PK = :pk AND begins_with(SK, :sk)',
      ...(filters ? { FilterExpression: filters } : {}),
      ...(filters
        ? { ExpressionAttributeNames: { ...(f.status && { '#status': 'status' }), ...(f.trigger && { '#trigger': 'trigger' }) } }
        : {}),
      ExpressionAttributeValues: {
        ':pk': byWorkflow ? `ACC#${accountId}#WF#${f.workflowId}` : `ACC#${accountId}`,
        ...(byWorkflow ? {} : { ':sk': 'EX#' }),
        ...(f.status && { ':status': f.status }),
        ...(f.trigger && { ':trigger': f.trigger }),
      },
      ScanIndexForward: false,
    },
    (i) => Execution.parse(i),
    limit,
    startKey,
  );
}

export const RunEvent = z.object({
  eventId: z.string(),
  type: z.string(),
  at: z.number(),
  executionId: z.string(),
  data: z.record(z.string(), z.unknown()),
});
export type RunEvent = z.infer<typeof RunEvent>;

const eventUlid = monotonicFactory();

export function newEvent(executionId: string, type: string, data: Record<string, unknown> = {}, at = Date.now()): RunEvent {
  return { eventId: `ev_${eventUlid(at).toLowerCase()}`, type, at, executionId, data };
}

/** A transaction item appending one event to a run's log. */
export const eventPut = (accountId: string, e: RunEvent) => ({
  Put: {
    TableName: tableName(),
    Item: { PK: runPartition(accountId, e.executionId), SK: `EV#${e.eventId}`, type: 'event', accountId, event: JSON.stringify(e) },
  },
});

export const listEvents = (accountId: string, executionId: string, limit: number, startKey?: Record<string, unknown>) =>
  queryPage(
    {
      KeyConditionExpression: 'PK = :pk AND begins_with(SK, :sk)',
      ExpressionAttributeValues: { ':pk': runPartition(accountId, executionId), ':sk': 'EV#' },
    },
    (i) => RunEvent.parse(JSON.parse(String(i.event))),
    limit,
    startKey,
  );

export { runPartition };
