import { randomUUID } from 'node:crypto';
import { listEvents } from '../db/entities/run-events.ts';
import { claimRun } from '../db/entities/execution-held.ts';
import { type Execution, getExecutionToChange, parseExecution } from '../db/entities/execution.ts';
import { WORKER_TIMEOUT_SECONDS } from '../db/table.ts';
import { logger } from '../logger.ts';
import { type RunMessage, sendRunMessage } from './dispatch.ts';
import { executeSteps } from './execute.ts';
import { notifyEvents } from './notify.ts';
import { recoverIfCrashed } from './recovery.ts';
import { countAcceptedTrigger, resolveRun } from './runs.ts';
import { HeldRun } from './session.ts';
import { currentWorkflow, workflowVersion } from './versions.ts';

/**
 * A claim holds the run until its invocation's time is up plus this margin (a Lambda invocation
 * cannot outlive its timeout, so the lease needs no extension); `LEASE_MS` is the longest lease.
 */
export const LEASE_MARGIN_MS = 10_000;
export const LEASE_MS = WORKER_TIMEOUT_SECONDS * 1000 + LEASE_MARGIN_MS;

export type WorkerOptions = {
  remainingMs: () => number;
  /** The clock crash detection compares leases with (tests move it past a lease). */
  now?: () => number;
};

/**
 * Handle one runs-queue message. The run's record, not the message, decides: the message may claim
 * the run only while the record still waits for exactly this dispatch id, so duplicates, redeliveries
 * and messages for cancelled or interrupted runs are acknowledged and dropped.
 */
export async function processRunMessage(m: RunMessage, opts: WorkerOptions): Promise<void> {
  try {
    await processHeld(m, opts);
  } catch (err) {
    // The message comes back after the visibility timeout (and ends in the DLQ): say why, with the run.
    logger.error('run message failed; it will be redelivered', { executionId: m.executionId, error: err as Error });
    throw err;
  }
}

async function processHeld(m: RunMessage, opts: WorkerOptions): Promise<void> {
  const owner = randomUUID();
  const claimed = await claim(m, owner, opts);
  if (!claimed) return;
  // A webhook run's first claim counts its trigger (written at the end of the worker's batch).
  if (claimed.from === 'PENDING') countAcceptedTrigger(claimed.run);
  const run = await hold(claimed.run, owner);
  if (!run) return;
  // Its next message (a delay's wake, a hand-off to a fresh invocation) keeps the lane this one came by.
  run.lane = m.lane;
  await executeSteps(run, opts.remainingMs);
}

/**
 * A run's message goes out together with the write of its record (`startRun`, and an approval
 * decision's), so the message can be first. The worker looks again a few times within the invocation (pauses of 25 ms, doubling: under a
 * second in all), then, while the start may still be writing (a throttled write retried by the SDK;
 * no start outlives its function's timeout), sends the message again to come back in a few seconds.
 * A record still missing after that belongs to a start that failed: the message is dropped.
 */
const RECORD_WAIT = { attempts: 6, firstPauseMs: 25, recheckSeconds: 5, startDeadlineMs: 60_000 };

/**
 * Take the run for this message: one conditional write that removes the dispatch id and sets the
 * lease (its end is this invocation's end), which moves the run to the leased part of the active index.
 */
async function claim(
  m: RunMessage,
  owner: string,
  opts: WorkerOptions,
): Promise<{ run: Execution; from: Execution['status'] } | undefined> {
  for (let attempt = 0; ; attempt++) {
    const now = Date.now();
    const lease = { owner, expiresAt: now + Math.min(opts.remainingMs(), WORKER_TIMEOUT_SECONDS * 1000) + LEASE_MARGIN_MS };
    const set = { status: 'RUNNING' as const, lease, updatedAt: now };
    const old = await claimRun(m, m.dispatch, set);
    if (old) {
      const before = parseExecution(old);
      const run: Execution = { ...before, ...set };
      delete run.dispatch;
      return { run, from: before.status };
    }
    const seen = await getExecutionToChange(m.accountId, m.executionId);
    // The record landed between the claim and this read: claim again.
    if (seen?.dispatch === m.dispatch && attempt + 1 < RECORD_WAIT.attempts) continue;
    // Not written yet: a start's record, or an approval decision (its message goes out beside its write too).
    const early = !seen || seen.status === 'WAITING_APPROVAL' || seen.status === 'WAITING_CALLBACK';
    if (early && attempt + 1 < RECORD_WAIT.attempts) {
      await new Promise((r) => setTimeout(r, RECORD_WAIT.firstPauseMs * 2 ** attempt));
      continue;
    }
    if (early && m.sentAt !== undefined && Date.now() - m.sentAt < RECORD_WAIT.startDeadlineMs) {
      await sendRunMessage(m, RECORD_WAIT.recheckSeconds);
      return undefined;
    }
    // A redelivery of the message an earlier attempt claimed: if that attempt's lease ran out, it died.
    if (seen && (await recoverIfCrashed(seen, (opts.now ?? Date.now)()))) return undefined;
    logger.info(seen ? 'run message dropped: not the dispatch the run waits for' : 'run message dropped: the run was never written', {
      executionId: m.executionId,
    });
    return undefined;
  }
}

/**
 * The claimed run with the definition it executes: its version (cached for good), or, for a run
 * started by reference (a webhook's), the workflow as it is now, with the template's defaults for its
 * inputs (written with the run's first write). A workflow deleted since the trigger, inputs of the
 * wrong type or a run too large to store fail the run (the trigger had answered 200; the request
 * stays on the run for a rerun).
 */
async function hold(e: Execution, owner: string): Promise<HeldRun | undefined> {
  if (e.workflowVersion !== undefined) {
    const version = await workflowVersion(e.accountId, e.workflowId, e.workflowVersion);
    if (version) return new HeldRun(e, version.definition, owner);
    const message = `Version ${e.workflowVersion} of workflow ${e.workflowId} no longer exists.`;
    return void (await new HeldRun(e, undefined, owner).fail({ code: 'WORKFLOW_NOT_FOUND', message }));
  }
  const workflow = await currentWorkflow(e.accountId, e.workflowId);
  const r = resolveRun(e, workflow);
  if (r.error) return void (await new HeldRun(e, undefined, owner).fail(r.error));
  const run = new HeldRun(e, r.workflow.definition, owner);
  run.update(r.fields);
  // The run's first event was written before its notification targets were known.
  if (r.workflow.definition.notifications?.length) await notifyEvents(run.e, (await listEvents(e.accountId, e.executionId, 1)).items);
  return run;
}
