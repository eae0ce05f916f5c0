import { GetCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import { db, tableName } from '../../clients.ts';
import { asJsonText, jsonText } from '../json.ts';
import { moveItem } from '../migrations/move.ts';
import { executionMoveTo, oldExecutionKey } from '../migrations/shapes.ts';
import { getItems } from '../query.ts';
import { listShards, shardedPage, shardKeys, shardOf } from '../shards.ts';
import {
  ExecutionStatus,
  LoopPosition,
  RecordedDecision,
  RecordedReport,
  RunError,
  StepState,
  Trigger,
  TriggerContext,
} from './execution-state.ts';

// Access patterns: get by account + id (PK EX#<account>#<id>, SK EXECUTION: a partition per run, so
// no account's runs are one hot key) · list by account newest first (GSI3: ACC#<account>#EX#<shard> /
// EX#<id>) · list by workflow newest first (GSI1: ACC#<account>#WF#<workflow>#<shard> / EX#<id>): both
// write-sharded, LIST_SHARDS shards merged per page (../shards.ts) · event log of a run
// (./run-events.ts) · in-progress runs for the sweeps (GSI2, ./execution-index.ts).
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
  /** Who asked for the cancel (a user id), when a person did: `execution.cancelled`'s `by`. */
  cancelBy: z.string().optional(),
  /** The API key that asked for the cancel, when no person did: `execution.cancelled`'s `key`. */
  cancelKey: z.string().optional(),
  approvalId: z.string().optional(),
  /** A decision on its approval that the run's worker has yet to apply. */
  decision: jsonText(RecordedDecision).optional(),
  wakeAt: z.number().optional(),
  /** The callback a WAITING_CALLBACK run waits for (`shared/db/entities/callback.ts`). */
  callbackId: z.string().optional(),
  /** What ended that wait, for the run's worker to apply. */
  report: jsonText(RecordedReport).optional(),
  rerunOf: z.string().optional(),
  /** A webhook run started by replaying a request of its inbound log (`rq_…` or the run `ex_…` it started). */
  replayOf: z.string().optional(),
  /** The sequence number of the run's last event (`nextSeq`). */
  seq: z.number().int().optional(),
  /** How many times the run was retried from its failed step (`shared/engine/retry-failed-run.ts`). */
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

/** Fields holding user JSON, stored as text (see ../json.ts). */
const JSON_FIELDS = ['variables', 'outputs', 'output', 'payload', 'decision', 'report', 'loop', 'triggerContext'] as const;

/** Execution fields as stored: the JSON fields as text. Use for every write of those fields. */
export const storedFields = <T extends Record<string, unknown>>(fields: T): T => asJsonText(fields, JSON_FIELDS);

export const executionKey = (accountId: string, executionId: string) => ({ PK: `EX#${accountId}#${executionId}`, SK: 'EXECUTION' });

/**
 * A stored run: its ids are its key's (the item does not repeat them: 79 bytes less on every write of
 * a run), or, on an item of the shape before (`executionMove`), its own attributes.
 */
export function parseExecution(item: Record<string, unknown>): Execution {
  const [kind, accountId, executionId] = String(item.PK).split('#');
  return Execution.parse(kind === 'EX' && item.SK === 'EXECUTION' ? { accountId, executionId, ...item } : item);
}

/** The attributes of a run's item as stored: its fields, the JSON ones as text, less the ids its key holds. */
export function storedExecution(e: Execution) {
  const { accountId: _a, executionId: _e, ...rest } = storedFields(e);
  return rest;
}

/** The account's and a workflow's run listings (GSI3, GSI1), before their shard suffix. */
export const accountListing = (accountId: string) => `ACC#${accountId}#EX`;
export const workflowListing = (accountId: string, workflowId: string) => `ACC#${accountId}#WF#${workflowId}`;

/** The run a listing entry names, from its sort key (`EX#<run>`). */
export const listedExecutionId = (sk: string) => sk.slice('EX#'.length);

/** The run's listing keys (its shard: a hash of its id), written once with the run and never changed. */
export function executionListings(e: Pick<Execution, 'accountId' | 'workflowId' | 'executionId'>) {
  const shard = shardOf(e.executionId, listShards());
  return {
    GSI1PK: `${workflowListing(e.accountId, e.workflowId)}#${shard}`,
    GSI1SK: `EX#${e.executionId}`,
    GSI3PK: `${accountListing(e.accountId)}#${shard}`,
    GSI3SK: `EX#${e.executionId}`,
  };
}

/**
 * Runs of the shape before the upgrade (./migrations/shapes.ts): `npm run admin -- migrate` moves them.
 * Meanwhile a read that misses a run looks there once (`getExecution`), and what changes a run moves it
 * first (`getExecutionToChange`, the active index's pages, a decision refused by the run's condition),
 * so a run in progress across the deploy goes on.
 */
export const executionMove = /* @__PURE__ */ executionMoveTo({ executionKey, executionListings });

const read = async (key: { PK: string; SK: string }) =>
  (await db().send(new GetCommand({ TableName: tableName(), Key: key, ConsistentRead: true }))).Item;

/**
 * A run of the shape before (see `executionMove`) moved to its key, when there is one: the run as it
 * now is. One read when there is none.
 */
export async function moveOldExecution(accountId: string, executionId: string): Promise<Record<string, unknown> | undefined> {
  const old = await read(oldExecutionKey(accountId, executionId));
  if (!old) return undefined;
  const moved = executionMove.moved(old);
  return (await moveItem(old, moved)) === 'moved' ? moved : read(executionKey(accountId, executionId));
}

/**
 * A run by id. On a miss, one read more: a run of the shape before (`executionMove`) not migrated yet,
 * as it is (for reads: the function may hold no write grant). What reads a run to change it uses
 * `getExecutionToChange`.
 */
export async function getExecution(accountId: string, executionId: string): Promise<Execution | undefined> {
  const item = (await read(executionKey(accountId, executionId))) ?? (await read(oldExecutionKey(accountId, executionId)));
  return item ? parseExecution(item) : undefined;
}

/** Runs by id, in one BatchGet (eventually consistent; those not found are left out). */
export const getExecutions = async (accountId: string, executionIds: readonly string[]): Promise<Execution[]> =>
  (await getItems(executionIds.map((id) => executionKey(accountId, id)))).map(parseExecution);

/** A run by id, to change it: on a miss, a run of the shape before is moved to its key first (its writes go there). */
export async function getExecutionToChange(accountId: string, executionId: string): Promise<Execution | undefined> {
  const item = (await read(executionKey(accountId, executionId))) ?? (await moveOldExecution(accountId, executionId));
  return item ? parseExecution(item) : undefined;
}

export type ExecutionFilters = { workflowId?: string; status?: ExecutionStatus; trigger?: z.infer<typeof Trigger> };

/** An account's runs or a workflow's, newest first: a page merged across the listing's shards (keys only, then one BatchGet). */
export function listExecutions(accountId: string, f: ExecutionFilters, limit: number, startKey?: Record<string, unknown>) {
  const keep = (i: Record<string, unknown>) => (!f.status || i.status === f.status) && (!f.trigger || i.trigger === f.trigger);
  const listing =
    f.workflowId !== undefined
      ? { index: 'GSI1', partitionKey: 'GSI1PK', sortKey: 'GSI1SK', partitions: shardKeys(workflowListing(accountId, f.workflowId)) }
      : { index: 'GSI3', partitionKey: 'GSI3PK', sortKey: 'GSI3SK', partitions: shardKeys(accountListing(accountId)) };
  return shardedPage(listing, parseExecution, limit, startKey, keep);
}

/** The step a run is in (running or waiting; inside a loop, the nested one), else the next one. */
export function currentStepId(e: Pick<Execution, 'steps' | 'nextStep' | 'loop'>): string | null {
  const top = e.steps.find((s) => s.status === 'RUNNING' || s.status === 'WAITING') ?? e.steps[e.nextStep];
  const nested = e.loop && top?.stepId === e.loop.stepId ? top.steps?.[e.loop.next] : undefined;
  return nested?.stepId ?? top?.stepId ?? null;
}
