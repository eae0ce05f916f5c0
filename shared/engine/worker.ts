import { randomUUID } from 'node:crypto';
import { TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { config } from '../config.ts';
import { db } from '../clients.ts';
import {
  ACTIVE_INDEX_ATTRIBUTES,
  activeSortKey,
  Execution,
  eventPut,
  IN_PROGRESS,
  executionItemBytes,
  MAX_EXECUTION_ITEM_BYTES,
  storedFields,
  executionKey,
  getExecution,
  listEvents,
  newEvent,
  type RunEvent,
  type StepState,
} from '../db/entities/execution.ts';
import { retryConflicts } from '../db/retry.ts';
import { buildUpdate } from '../db/update.ts';
import { isConditionFailure } from '../errors.ts';
import { logger } from '../logger.ts';
import { evaluateTemplate } from './expressions.ts';
import { MAX_DELAY_SECONDS, newDispatch, type RunMessage, sendRunMessage } from './dispatch.ts';
import { notifyEvents } from './notify.ts';
import { recoverIfCrashed } from './recovery.ts';
import { cancelledUpdate, countAcceptedTrigger, runFromWorkflow } from './runs.ts';
import { getWorkflow, type Workflow } from '../db/entities/workflow.ts';
import { type Outcome, runStep, scopeOf } from './steps.ts';
import { StepError } from './step-error.ts';
import { emit } from '../metrics.ts';

/** How long a claim holds a run without a checkpoint; every checkpoint extends it. */
export const LEASE_MS = 90_000;
/** Hand the run to a fresh invocation when less than this is left of the current one. */
const HANDOFF_MARGIN_MS = 15_000;
/** Variables and step outputs of a run, as JSON. */
export const MAX_STATE_BYTES = 256 * 1024;
const CANCEL_POLL_MS = 1_000;

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
  const owner = randomUUID();
  const claimed = await claim(m, owner, opts);
  if (!claimed) return;
  // A webhook run's first claim counts its trigger, beside the run's first step.
  const counting = claimed.from === 'PENDING' ? countAcceptedTrigger(claimed.run) : undefined;
  try {
    let e = claimed.run.definition ? claimed.run : await resolveRun(claimed.run, owner);
    if (e?.wakeAt !== undefined && e.wakeAt > Date.now() + 500) return void (await release(e, owner, e.wakeAt));
    while (e) {
      if (e.nextStep >= (e.definition?.steps.length ?? 0)) return void (await finish(e, owner));
      if (opts.remainingMs() < HANDOFF_MARGIN_MS) return void (await release(e, owner));
      e = await runNextStep(e, owner);
    }
  } finally {
    await counting;
  }
}

/**
 * A run's message goes out together with the write of its record (`startRun`), so the message can be
 * first. The worker looks again a few times within the invocation (pauses of 25 ms, doubling: under a
 * second in all), then, while the start may still be writing (a throttled write retried by the SDK;
 * no start outlives its function's timeout), sends the message again to come back in a few seconds.
 * A record still missing after that belongs to a start that failed: the message is dropped.
 */
const RECORD_WAIT = { attempts: 6, firstPauseMs: 25, recheckSeconds: 5, startDeadlineMs: 60_000 };

/** Take the run for this message: the run as claimed and the status it was claimed from. */
async function claim(
  m: RunMessage,
  owner: string,
  opts: WorkerOptions,
): Promise<{ run: Execution; from: Execution['status'] } | undefined> {
  for (let attempt = 0; ; attempt++) {
    const now = Date.now();
    const lease = { owner, expiresAt: now + LEASE_MS };
    const set = { status: 'RUNNING' as const, lease, updatedAt: now };
    try {
      const { Attributes } = await retryConflicts(() =>
        db().send(
          new UpdateCommand({
            ...buildUpdate(
              executionKey(m.accountId, m.executionId),
              { ...set, GSI2SK: activeSortKey(m.executionId, lease) },
              ['dispatch'],
              {
                expression: 'dispatch = :d AND #status IN (:pending, :running)',
                names: { '#status': 'status' },
                values: { ':d': m.dispatch, ':pending': 'PENDING', ':running': 'RUNNING' },
              },
            ),
            ReturnValues: 'ALL_OLD',
          }),
        ),
      );
      const before = Execution.parse(Attributes);
      const run: Execution = { ...before, ...set };
      delete run.dispatch;
      return { run, from: before.status };
    } catch (err) {
      if (!isConditionFailure(err)) throw err;
    }
    const seen = await getExecution(m.accountId, m.executionId);
    if (!seen && attempt + 1 < RECORD_WAIT.attempts) {
      await new Promise((r) => setTimeout(r, RECORD_WAIT.firstPauseMs * 2 ** attempt));
      continue;
    }
    if (!seen && m.sentAt !== undefined && Date.now() - m.sentAt < RECORD_WAIT.startDeadlineMs) {
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
 * A run started by reference (a webhook's) takes its workflow when first picked up: the definition as
 * it is now, the template's defaults for its inputs. A workflow deleted since the trigger, inputs of
 * the wrong type or a run too large to store fail the run (the trigger had answered 200; the request
 * stays on the run for a rerun). Returns the run ready for its first step, or undefined.
 */
async function resolveRun(e: Execution, owner: string): Promise<Execution | undefined> {
  const r = resolution(e, await getWorkflow(e.accountId, e.workflowId));
  if ('error' in r) {
    const now = Date.now();
    const event = newEvent(e.executionId, 'execution.failed', { error: r.error }, now);
    const failed = await checkpoint(e, owner, { status: 'FAILED', error: r.error, finishedAt: now }, ['lease'], [], [event]);
    if (failed) emit('ExecutionFailed');
    return undefined;
  }
  const next = await checkpoint(e, owner, r.fields, [], [], []);
  // The run's first event was written before its notification targets were known.
  if (next?.definition?.notifications?.length) await notifyEvents(next, (await listEvents(e.accountId, e.executionId, 1)).items);
  return next;
}

function resolution(e: Execution, workflow: Workflow | undefined) {
  if (!workflow) return { error: { code: 'WORKFLOW_NOT_FOUND', message: `Workflow ${e.workflowId} no longer exists.` } };
  const r = runFromWorkflow(workflow, e.variables);
  if (!r.ok) {
    return {
      error: { code: 'VALIDATION_FAILED', message: `Inputs refused: ${r.errors.map((x) => `${x.path} ${x.message}`).join('; ')}.` },
    };
  }
  if (executionItemBytes({ ...e, ...r.fields }) > MAX_EXECUTION_ITEM_BYTES) {
    return {
      error: { code: 'STATE_TOO_LARGE', message: 'The run (variables and the workflow definition together) is too large to store.' },
    };
  }
  return { fields: r.fields };
}

/** Conditions of every write a worker makes while it holds the run. */
const held = (owner: string) => ({
  expression: '#status = :running AND #lease.#owner = :owner AND attribute_not_exists(cancelRequested)',
  names: { '#status': 'status', '#lease': 'lease', '#owner': 'owner' },
  values: { ':running': 'RUNNING', ':owner': owner },
});

/**
 * Write a checkpoint (execution fields + extra items + events) in one transaction. When the condition
 * fails the run was cancelled or taken away: cancel it if asked, else stop without touching it.
 */
async function checkpoint(
  e: Execution,
  owner: string,
  set: Partial<Execution>,
  remove: string[],
  items: object[],
  events: RunEvent[],
): Promise<Execution | undefined> {
  const now = Date.now();
  const fields = { ...set, updatedAt: now };
  const next: Execution = { ...e, ...fields } as Execution;
  for (const k of remove) delete (next as Record<string, unknown>)[k];
  // The active index follows the run: its lease while in progress, nothing once it has finished.
  const inProgress = IN_PROGRESS.includes(next.status);
  const index = inProgress ? { GSI2SK: activeSortKey(e.executionId, next.lease) } : {};
  const removed = inProgress ? remove : [...remove, ...ACTIVE_INDEX_ATTRIBUTES];
  try {
    // A cancel request written while this transaction is in flight makes DynamoDB refuse it: again, and
    // then the condition sees the request.
    await retryConflicts(() =>
      db().send(
        new TransactWriteCommand({
          TransactItems: [
            { Update: buildUpdate(executionKey(e.accountId, e.executionId), { ...storedFields(fields), ...index }, removed, held(owner)) },
            ...(items as never[]),
            ...events.map((ev) => eventPut(e.accountId, ev)),
          ],
        }),
      ),
    );
  } catch (err) {
    if (!isConditionFailure(err)) throw err;
    await stopAfterLostCheckpoint(e.accountId, e.executionId, owner);
    return undefined;
  }
  await notifyEvents(e, events);
  return next;
}

async function stopAfterLostCheckpoint(accountId: string, executionId: string, owner: string) {
  const current = await getExecution(accountId, executionId);
  if (current?.status === 'RUNNING' && current.cancelRequested && current.lease?.owner === owner) {
    const now = Date.now();
    const event = newEvent(executionId, 'execution.cancelled', { reason: current.cancelReason ?? null, from: 'RUNNING' }, now);
    try {
      await db().send(
        new TransactWriteCommand({
          TransactItems: [{ Update: cancelledUpdate(current, current.cancelReason, now) }, eventPut(accountId, event)],
        }),
      );
      await notifyEvents(current, [event]);
    } catch (err) {
      if (!isConditionFailure(err)) throw err;
    }
    return;
  }
  logger.warn('checkpoint lost: the run changed under this worker; stopping', { executionId, status: current?.status });
}

const stateBytes = (variables: unknown, outputs: unknown) => Buffer.byteLength(JSON.stringify({ variables, outputs }));

async function runNextStep(e: Execution, owner: string): Promise<Execution | undefined> {
  const index = e.nextStep;
  const step = e.definition?.steps[index];
  if (!step) return e;
  const startedAt = Date.now();
  const abort = new AbortController();
  const watch = step.type === 'http_request' ? watchForCancel(e, abort) : undefined;
  let outcome: Outcome;
  try {
    outcome = await runStep(step, { execution: e, scope: scopeOf(e), signal: abort.signal, now: startedAt });
  } catch (err) {
    if (!(err instanceof StepError)) throw err;
    outcome = { kind: 'failed', error: { code: err.code, message: err.message }, continueRun: false };
  } finally {
    if (watch) clearInterval(watch);
  }
  if (abort.signal.aborted) return void (await stopAfterLostCheckpoint(e.accountId, e.executionId, owner));

  const now = Date.now();
  emit('StepDuration', now - startedAt);
  const base: StepState = { stepId: step.id, type: step.type, status: 'SUCCEEDED', startedAt, finishedAt: now };
  const started = newEvent(e.executionId, 'step.started', { stepId: step.id, type: step.type }, startedAt);
  const steps = (s: StepState) => e.steps.map((x, i) => (i === index ? s : x));
  const lease = { owner, expiresAt: now + LEASE_MS };

  if (outcome.kind === 'done' || (outcome.kind === 'failed' && outcome.continueRun)) {
    const variables = { ...e.variables, ...outcome.variables };
    const outputs = outcome.output === undefined ? e.outputs : { ...e.outputs, [step.id]: outcome.output };
    if (stateBytes(variables, outputs) > MAX_STATE_BYTES || executionItemBytes({ ...e, variables, outputs }) > MAX_EXECUTION_ITEM_BYTES) {
      outcome = {
        kind: 'failed',
        error: { code: 'STATE_TOO_LARGE', message: `Variables and outputs exceed ${MAX_STATE_BYTES} bytes after step ${step.id}.` },
        continueRun: false,
      };
    } else {
      const state = outcome.kind === 'failed' ? { ...base, status: 'FAILED' as const, error: outcome.error } : base;
      const done = newEvent(
        e.executionId,
        outcome.kind === 'failed' ? 'step.failed' : 'step.succeeded',
        { stepId: step.id, ...(outcome.kind === 'failed' ? { error: outcome.error } : {}) },
        now,
      );
      return checkpoint(
        e,
        owner,
        { steps: steps(state), variables, outputs, nextStep: index + 1, lease, currentStepId: undefined } as Partial<Execution>,
        [],
        outcome.kind === 'done' ? (outcome.items ?? []) : [],
        [started, done],
      );
    }
  }
  switch (outcome.kind) {
    case 'skipped':
      return checkpoint(e, owner, { steps: steps({ ...base, status: 'SKIPPED' }), nextStep: index + 1, lease }, [], [], []);
    case 'failed':
    case 'fail-run': {
      const error = outcome.error;
      const failedStep = newEvent(e.executionId, 'step.failed', { stepId: step.id, error }, now);
      const failedRun = newEvent(e.executionId, 'execution.failed', { error }, now);
      const ended = await checkpoint(
        e,
        owner,
        { status: 'FAILED', steps: steps({ ...base, status: 'FAILED', error }), error, finishedAt: now },
        ['lease'],
        [],
        [started, failedStep, failedRun],
      );
      if (ended) emit('ExecutionFailed');
      return undefined;
    }
    case 'wait-approval': {
      const a = outcome.approval;
      const base = config().PUBLIC_BASE_URL ?? '';
      const links = {
        approve: `${base}/api/webhook-trigger/approval/${a.approvalId}/approve?api_key={API_KEY}`,
        reject: `${base}/api/webhook-trigger/approval/${a.approvalId}/reject?api_key={API_KEY}`,
      };
      const requested = newEvent(
        e.executionId,
        'approval.requested',
        {
          approvalId: a.approvalId,
          stepId: step.id,
          title: a.title,
          reviewers: a.reviewers,
          form: a.form ?? null,
          expiresAt: a.expiresAt ?? null,
          links,
        },
        now,
      );
      await checkpoint(
        e,
        owner,
        {
          status: 'WAITING_APPROVAL',
          steps: steps({ stepId: step.id, type: step.type, status: 'WAITING', startedAt }),
          approvalId: a.approvalId,
        },
        ['lease'],
        outcome.items,
        [started, requested],
      );
      return undefined;
    }
    case 'sleep': {
      const next = await checkpoint(
        e,
        owner,
        { steps: steps({ stepId: step.id, type: step.type, status: 'RUNNING', startedAt }), nextStep: index + 1, wakeAt: outcome.until },
        [],
        [],
        [started],
      );
      if (next) await release(next, owner, outcome.until);
      return undefined;
    }
    default:
      return undefined;
  }
}

/** Poll for a cancel request while a long step runs, and abort it when one arrives. */
function watchForCancel(e: Execution, abort: AbortController) {
  return setInterval(() => {
    getExecution(e.accountId, e.executionId)
      .then((current) => {
        if (current?.cancelRequested) abort.abort();
      })
      .catch(() => undefined);
  }, CANCEL_POLL_MS);
}

/**
 * Release the run to a new queue message: at once when this invocation runs out of time, or after a
 * delay step's wait (`until`; SQS delays are at most 15 minutes, so a longer wait takes several hops).
 */
async function release(e: Execution, owner: string, until?: number) {
  const dispatch = newDispatch();
  const released = await checkpoint(e, owner, { dispatch }, ['lease'], [], []);
  if (released) {
    const delaySeconds = until === undefined ? 0 : Math.min(MAX_DELAY_SECONDS, (until - Date.now()) / 1000);
    await sendRunMessage({ accountId: e.accountId, executionId: e.executionId, dispatch }, delaySeconds);
  }
}

async function finish(e: Execution, owner: string) {
  const now = Date.now();
  // A delay that was the last step completes here.
  const steps = e.steps.map((s) => (s.status === 'RUNNING' ? { ...s, status: 'SUCCEEDED' as const, finishedAt: now } : s));
  let output: unknown = null;
  try {
    const template = e.definition?.output;
    output = template === undefined ? null : ((await evaluateTemplate(template, scopeOf(e))) ?? null);
  } catch (err) {
    if (!(err instanceof StepError)) throw err;
    const error = { code: 'OUTPUT_FAILED', message: err.message };
    const failed = await checkpoint(
      e,
      owner,
      { status: 'FAILED', steps, error, finishedAt: now },
      ['lease', 'wakeAt'],
      [],
      [newEvent(e.executionId, 'execution.failed', { error }, now)],
    );
    if (failed) emit('ExecutionFailed');
    return;
  }
  const succeeded = await checkpoint(
    e,
    owner,
    { status: 'SUCCEEDED', steps, output, finishedAt: now },
    ['lease', 'wakeAt'],
    [],
    [newEvent(e.executionId, 'execution.succeeded', { output }, now)],
  );
  if (succeeded) emit('ExecutionSucceeded');
}
