import { CALLBACK_PATH, link } from '../../links.ts';
import { type Callback, type CallbackStatus, getCallback, handledCallbackUpdate } from '../../db/entities/callback.ts';
import type { RecordedReport, RunError } from '../../db/entities/execution-state.ts';
import { eventsPut, newEvent } from '../../db/entities/run-events.ts';
import { activeIndex } from '../../db/entities/execution-index.ts';
import { type Execution, executionKey } from '../../db/entities/execution.ts';
import { buildUpdate, type Condition } from '../../db/update.ts';
import { newId } from '../../ids.ts';
import { hashToken, mintToken } from '../../tokens.ts';
import { writeDecision } from '../decisions.ts';
import type { WaitForCallbackStep } from '../definition.ts';
import { newDispatch, sendRunMessage } from '../dispatch.ts';
import type { StepContext } from '../steps.ts';

/**
 * `wait_for_callback`: the run waits (WAITING_CALLBACK, no worker) until an external system reports
 * on the callback with its one token, its deadline passes (the scheduled sweep) or it is cancelled.
 * Callbacks are approvals for machines: one conditional write decides them (`settleCallback`), and
 * the run's side of it is recorded on the run for its worker to apply, as a decision is.
 */

/** The callback's address (the token is the credential, sent as `Authorization: Bearer`). */
export const callbackUrl = (callbackId: string) => link(CALLBACK_PATH, { callbackId });

export type CallbackWait = { kind: 'wait-callback'; callback: Callback; token: string; url: string };

/** The step: a new callback (its token minted here, only its hash kept), for the worker to write with the wait. */
export function waitForCallback(step: WaitForCallbackStep, ctx: StepContext): CallbackWait {
  const { execution: e, now } = ctx;
  const callbackId = newId('cb');
  // The token names its account (`acc_<id>`: `callback-auth` looks the callback up there).
  const token = mintToken('dyc', e.accountId.slice(e.accountId.indexOf('_') + 1));
  const timeoutAt = now + step.timeoutSeconds * 1000;
  const callback: Callback = {
    callbackId,
    accountId: e.accountId,
    executionId: e.executionId,
    workflowId: e.workflowId,
    stepId: step.id,
    status: 'PENDING',
    tokenHash: hashToken(token),
    onTimeout: step.onTimeout,
    timeoutAt,
    ...(step.heartbeatSeconds ? { heartbeatSeconds: step.heartbeatSeconds } : {}),
    deadline: step.heartbeatSeconds ? Math.min(timeoutAt, now + step.heartbeatSeconds * 1000) : timeoutAt,
    createdAt: now,
  };
  return { kind: 'wait-callback', callback, token, url: callbackUrl(callbackId) };
}

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
  const update = buildUpdate(
    executionKey(c.accountId, c.executionId),
    {
      status: 'RUNNING',
      dispatch,
      report: JSON.stringify(report),
      updatedAt: now,
      seq,
      ...(resumed ? activeIndex({ ...resumed, lease: undefined }) : {}),
    },
    ['callbackId', ...(resumed ? ['interruptedAt', 'interruptReason'] : [])],
    {
      expression: '#status = :seen AND callbackId = :cb',
      names: { '#status': 'status' },
      values: { ':seen': resumed ? 'INTERRUPTED' : 'WAITING_CALLBACK', ':cb': c.callbackId },
    },
  );
  return { items: [{ Update: update }, eventsPut(c.accountId, [event])], dispatch };
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
