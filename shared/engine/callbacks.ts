import { type Callback, type CallbackStatus, getCallback, handledCallbackUpdate } from '../db/entities/callback.ts';
import type { Execution } from '../db/entities/execution.ts';
import { waitEnded } from '../db/entities/execution-transitions.ts';
import type { RecordedReport, RunError } from '../db/entities/execution-state.ts';
import { eventsPut, newEvent } from '../db/entities/run-events.ts';
import type { Condition } from '../db/update.ts';
import { writeDecision } from './decisions.ts';
import { newDispatch, sendRunMessage } from './dispatch.ts';

/**
 * Callbacks, the record a `wait_for_callback` step waits on (its step module: ./steps/wait-for-callback.ts).
 * Callbacks are approvals for machines: one conditional write decides them (`settleCallback`), and
 * the run's side of it is recorded on the run for its worker to apply, as a decision is. Apart from
 * the step module: the callback routes load this without the step engine.
 */

/**
 * The run's side of a callback's outcome, as transaction items written with the callback's own
 * change: the outcome recorded on the run, which goes back to RUNNING with a new dispatch, and its
 * event (`callback.reported` or `callback.expired`), numbered after `callback.requested`. No read of
 * the run: conditional on it still waiting for this callback. `resumed`: a person resumes the
 * INTERRUPTED run, which takes the outcome recorded meanwhile.
 */
export function reportTransition(
  c: Pick<Callback, 'accountId' | 'executionId' | 'callbackId' | 'stepId' | 'runSeq'>,
  status: Exclude<CallbackStatus, 'PENDING' | 'CANCELLED'>,
  opts: { now: number; resumed?: Execution; seq?: number; error?: RunError },
) {
  const { now, resumed } = opts;
  const dispatch = newDispatch();
  const seq = opts.seq ?? (c.runSeq ?? 0) + 1;
  const outcome = status === 'SUCCEEDED' ? 'success' : status === 'FAILED' ? 'failure' : 'timeout';
  const data = { callbackId: c.callbackId, stepId: c.stepId, status: outcome, ...(opts.error ? { error: opts.error } : {}) };
  const event = { ...newEvent(c.executionId, status === 'TIMED_OUT' ? 'callback.expired' : 'callback.reported', data, now), seq };
  const report: RecordedReport = { callbackId: c.callbackId, stepId: c.stepId, at: now, outcome, event };
  const update = waitEnded(
    c,
    { callbackId: c.callbackId, report: JSON.stringify(report) },
    { dispatch, now, seq, ...(resumed ? { resumed } : {}) },
  );
  return {
    items: [update, eventsPut(c.accountId, [event])],
    dispatch,
    run: { accountId: c.accountId, executionId: c.executionId },
  };
}

export type CallbackResult = { status: 'SUCCEEDED'; output: Record<string, unknown> } | { status: 'FAILED' | 'TIMED_OUT'; error: RunError };

/**
 * Decide a pending callback: its outcome and the run's side in one transaction (`writeDecision`).
 * `moved`: the run takes it (its message is sent); `recorded`: the run no longer waits for it
 * (interrupted: a resume applies it); `refused`: decided before (or `also` no longer holds).
 */
export async function settleCallback(c: Callback, result: CallbackResult, now: number, also?: Condition) {
  const error = result.status === 'SUCCEEDED' ? undefined : result.error;
  const t = reportTransition(c, result.status, { now, error });
  const own = [{ Update: handledCallbackUpdate(c, result, now, also) }];
  const written = await writeDecision(own, t);
  if (written === 'moved') await sendRunMessage({ accountId: c.accountId, executionId: c.executionId, dispatch: t.dispatch });
  return written;
}

/**
 * The outcome a run's worker applies (`RecordedReport`), with what the callback holds: the step's
 * output (success; a timeout with `onTimeout: "continue"`), or its error.
 */
export async function reportedOutcome(
  e: Pick<Execution, 'accountId'>,
  r: RecordedReport,
): Promise<{ output: unknown; error?: undefined } | { error: RunError; output?: undefined }> {
  const c = await getCallback(e.accountId, r.callbackId);
  if (r.outcome === 'success') return { output: { callbackId: r.callbackId, status: 'success', output: c?.output ?? {} } };
  if (r.outcome === 'timeout' && c?.onTimeout === 'continue')
    return { output: { callbackId: r.callbackId, status: 'timed_out', output: null } };
  return {
    error: c?.error ?? { code: r.outcome === 'timeout' ? 'CALLBACK_TIMED_OUT' : 'CALLBACK_FAILED', message: 'The callback ended.' },
  };
}
