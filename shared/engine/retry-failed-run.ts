// Retry (v1): a FAILED run re-enters the step that failed, with the state it had. Beside resume
// (INTERRUPTED runs, `resume.ts`) and rerun (a new run from the start, `runs.ts`).
import { countRunChange } from '../db/entities/run-hours.ts';
import type { Via } from '../db/audited.ts';
import { audited } from '../db/audited.ts';
import { writeAll } from '../db/transact.ts';
import { retryUndone, runChange } from '../db/entities/execution-transitions.ts';
import { config } from '../config.ts';
import { eventsPut, newEvent, nextSeq } from '../db/entities/run-events.ts';
import { ACTIVE_INDEX_ATTRIBUTES } from '../db/entities/execution-index.ts';
import { type Execution, getExecutionToChange } from '../db/entities/execution.ts';
import {
  getIdempotencyRecord,
  IDEMPOTENCY_TTL_SECONDS,
  idempotencyDelete,
  idempotencyPut,
  idempotencyScope,
} from '../db/entities/idempotency.ts';
import { keptChanging, lostRace, retryConflicts } from '../db/conflicts.ts';
import { retentionTtl } from '../db/retention.ts';
import { conflict, isConditionFailure, notFound } from '../errors.ts';
import { logger } from '../logger.ts';
import { newDispatch, sendRunMessage } from './dispatch.ts';
import { notifyEvents } from './notify.ts';

const DAY_MS = 86_400_000;
const idemScope = idempotencyScope.runRetry;

/**
 * Why a run cannot be retried (409, a code each), or nothing. A rejection is a person's decision, not
 * a fault: rerun the workflow to ask again. A run that failed before its first step (its workflow
 * deleted, inputs of the wrong type, never queued) has no step to re-enter: rerun it.
 */
export function retryRefusal(e: Execution, now: number) {
  if (e.status !== 'FAILED')
    return conflict('EXECUTION_NOT_FAILED', `Execution ${e.executionId} is ${e.status}; only a FAILED run can be retried.`);
  if (e.error?.code === 'APPROVAL_REJECTED') {
    return conflict('EXECUTION_REJECTED', `Execution ${e.executionId} failed because its approval was rejected; rerun it to ask again.`);
  }
  if (e.workflowVersion === undefined || e.steps.every((s) => s.status === 'PENDING')) {
    return conflict('EXECUTION_FAILED_BEFORE_FIRST_STEP', `Execution ${e.executionId} failed before its first step; rerun it instead.`);
  }
  const limit = config().RETRY_LIMIT;
  if ((e.retries ?? 0) >= limit) return conflict('RETRY_LIMIT_REACHED', `Execution ${e.executionId} was retried ${limit} times already.`);
  if ((e.finishedAt ?? e.updatedAt) + config().RETENTION_DAYS * DAY_MS <= now) {
    return conflict('RETENTION_EXPIRED', `Execution ${e.executionId} finished more than ${config().RETENTION_DAYS} days ago.`);
  }
  return undefined;
}

/**
 * The retried run: PENDING again with a new dispatch (the worker claims it, RUNNING), back in the
 * active index, out of retention (runs in progress never expire), its error and end removed. It keeps
 * its workflow version, variables, step outputs and `nextStep`, the step that failed: that step goes
 * back to PENDING with its attempt count grown; the steps before it are not run again.
 */
function retried(e: Execution, by: string, now: number) {
  const index = e.nextStep;
  const steps = e.steps.map((s, i) =>
    i === index ? { stepId: s.stepId, type: s.type, status: 'PENDING' as const, attempts: (s.attempts ?? 1) + 1 } : s,
  );
  const retries = (e.retries ?? 0) + 1;
  const seq = nextSeq(e);
  const fields = { status: 'PENDING' as const, dispatch: newDispatch(), retries, steps, updatedAt: now, seq };
  // `executed`: a retry gives the run its `maxStepExecutions` afresh (a run that failed STEP_LIMIT_EXCEEDED can go on).
  const remove = [
    'error',
    'finishedAt',
    'ttl',
    'output',
    'lease',
    'wakeAt',
    'decision',
    'approvalId',
    'cancelRequested',
    'cancelReason',
    'cancelBy',
    'cancelKey',
    'executed',
  ];
  const stepId = e.steps[index]?.stepId ?? null;
  const event = {
    ...newEvent(e.executionId, 'execution.retried', { by, stepId, retry: retries, previousError: e.error ?? null }, now),
    seq,
  };
  return { fields, remove, event };
}

/** Who retries (a principal: its `via` goes to the audit log). */
export type RetryBy = { userId: string; keyId?: string; kind?: string; via?: Via };

const alreadyRetried = (e: Execution) =>
  conflict(
    'ALREADY_RETRIED',
    `Execution ${e.executionId} was retried already (${e.retries} times); send a new Idempotency-Key to retry it again.`,
  );

/**
 * Retry (v1): the FAILED run re-enters its failed step (`retried`). One transaction writes the run
 * (conditional on the state read, so on its retry counter), its `execution.retried` event and, with an
 * `Idempotency-Key`, the key; the message follows the write. A replay of the key answers with the run
 * as it is now. A run retried before needs a new key (409 `ALREADY_RETRIED` without one), so
 * concurrent or resent keyless requests move a run once, however fast it fails again.
 */
export async function retryRun(
  accountId: string,
  executionId: string,
  by: RetryBy,
  idempotency?: { key: string },
  now = Date.now(),
): Promise<{ execution: Execution; replayed: boolean }> {
  const scope = idemScope(executionId);
  const written = await retryConflicts(
    async () => {
      const e = await getExecutionToChange(accountId, executionId);
      if (!e) throw notFound('EXECUTION_NOT_FOUND', `Execution ${executionId} does not exist.`);
      // The key is bound to this run (its scope), so any earlier use of it is this very request.
      if (idempotency) {
        const earlier = await getIdempotencyRecord(accountId, scope, idempotency.key);
        if (earlier && earlier.createdAt + IDEMPOTENCY_TTL_SECONDS * 1000 > now) return { replayed: true as const, e };
      }
      const refusal = retryRefusal(e, now);
      if (refusal) throw refusal;
      // Without a key a request names no failure of its own, so it may move only the first one: a
      // duplicate that arrives (or, having lost the race, reads again) after the run was retried and
      // failed again would retry it a second time. The write below is conditional on the run as read,
      // so the retry moves the failure this request saw, at most once.
      if (!idempotency && (e.retries ?? 0) > 0) throw alreadyRetried(e);
      const { fields, remove, event } = retried(e, by.userId, now);
      const items = [
        ...(idempotency ? [idempotencyPut(accountId, scope, idempotency.key, { executionId, requestHash: 'retry', createdAt: now })] : []),
        runChange(e, fields, remove, { as: { ...e, ...fields, lease: undefined, wakeAt: undefined }, now }),
        eventsPut(accountId, [event]),
        audited({ accountId, ...by }, 'run.retried', { type: 'run', id: executionId }, { stepId: event.data.stepId ?? null }, now),
      ];
      await writeAll(items);
      // The FAILED run leaves the hour it was counted in.
      countRunChange(e, fields, now);
      return { replayed: false as const, e, fields, remove, event };
    },
    { attempts: 5, retryOn: lostRace, exhausted: keptChanging('execution') },
  );
  if (written.replayed) return { execution: written.e, replayed: true };
  const { e, fields, remove, event } = written;
  const run: Execution = { ...e, ...fields };
  for (const k of remove) delete (run as Record<string, unknown>)[k];
  await sendRunMessage({ accountId, executionId, dispatch: fields.dispatch }).catch((cause: unknown) =>
    abandonUnsent(e, fields.dispatch, idempotency && { scope, key: idempotency.key }, cause),
  );
  await notifyEvents(run, [event]);
  return { execution: run, replayed: false };
}

/**
 * The retry's message could not be sent: the run goes back to how it was (FAILED, its steps, its
 * retry count), the key is freed, and the caller gets the error (a 500) to try again. Conditional
 * on the run still waiting for this dispatch: a worker that claimed it got the message after all.
 */
async function abandonUnsent(e: Execution, dispatch: string, idem: { scope: string; key: string } | undefined, cause: unknown) {
  const now = Date.now();
  const finishedAt = e.finishedAt ?? now;
  const restore = {
    status: 'FAILED',
    error: e.error,
    steps: e.steps,
    finishedAt,
    ttl: retentionTtl(finishedAt),
    updatedAt: now,
    retries: e.retries,
    // After the retry's `execution.retried` (nextSeq(e)).
    seq: nextSeq(e) + 1,
  };
  try {
    await writeAll([
      retryUndone(e, dispatch, restore, ['dispatch', ...ACTIVE_INDEX_ATTRIBUTES, ...(e.retries === undefined ? ['retries'] : [])]),
      eventsPut(e.accountId, [
        { ...newEvent(e.executionId, 'execution.failed', { error: e.error ?? null, retryNotQueued: true }, now), seq: restore.seq },
      ]),
      ...(idem ? [idempotencyDelete(e.accountId, idem.scope, idem.key, e.executionId)] : []),
    ]);
    countRunChange({ ...e, status: 'PENDING' }, { status: 'FAILED', error: e.error }, now);
  } catch (err) {
    if (isConditionFailure(err)) return;
    logger.error('unsent retry left PENDING', { executionId: e.executionId, error: err as Error });
  }
  throw cause;
}
