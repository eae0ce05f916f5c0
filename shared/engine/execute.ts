import { APPROVAL_LINK_PATH, link } from '../links.ts';
import { approvalPut } from '../db/entities/approval.ts';
import { nudgePut } from '../db/entities/approval-nudge.ts';
import { callbackPut } from '../db/entities/callback.ts';
import type { RunError, StepState } from '../db/entities/execution-state.ts';
import { newEvent, type RunEvent } from '../db/entities/run-events.ts';
import { executionItemBytes, MAX_EXECUTION_ITEM_BYTES } from '../db/entities/execution-writes.ts';
import { type Execution, getExecution } from '../db/entities/execution.ts';
import { logger } from '../logger.ts';
import { emit } from '../metrics.ts';
import type { ForEachStep, NestedStep, Step } from './definition.ts';
import { evaluateTemplate } from './expressions.ts';
import { advance, countStep, type Here, iterationOf, locate, setState, startLoop, stateAt, tooLarge } from './flow.ts';
import { notifyEvents } from './notify.ts';
import { applyDecision, endDelays, wake } from './waits.ts';
import { type HeldRun, stopAfterLostWrite } from './session.ts';
import { StepError } from '../step-error.ts';
import { currentAttempt, planRetry, retryInProgress, scheduleRetry, storageFailure, withAttempts } from './step-retry.ts';
import { type Outcome, runStep, scopeOf } from './steps.ts';
import { sendCallbackRequest } from './steps/callback-request.ts';
import { reportedOutcome } from './steps/wait-for-callback.ts';

/** Variables and step outputs of a run, as JSON. */
export const MAX_STATE_BYTES = 256 * 1024;
/** Time kept back at the end of an invocation for the last write and the hand-off to a new message. */
export const HANDOFF_MARGIN_MS = 5_000;
const CANCEL_POLL_MS = 1_000;

/**
 * The longest a step may take: an http_request its timeout (and the address checks), an artifact its
 * upload, any other step its expressions (each budgeted at 1 s). A step starts only when this fits in
 * what is left of the invocation; otherwise the run goes to a fresh invocation first, so a slow step
 * never times the invocation out (and with it the other runs of its batch).
 */
export const stepBudgetMs = (step: Step | NestedStep) =>
  step.type === 'http_request'
    ? step.timeoutMs + 2_000
    : step.type === 'artifact'
      ? 10_000
      : step.type === 'wait_for_callback' && step.request
        ? step.request.timeoutMs + 2_000
        : 2_000;

/** Steps whose effect lives outside the run (a request sent, an object stored): the run's progress is written before them. */
const external = (step: Step | NestedStep) => step.type === 'http_request' || step.type === 'artifact';

/** Run the held run's steps until it ends, waits (approval, callback, delay, a retry's backoff) or needs a fresh invocation. */
export async function executeSteps(run: HeldRun, remainingMs: () => number): Promise<void> {
  if (!(await applyDecision(run))) return;
  if (!(await applyReport(run))) return;
  const { wakeAt } = run.e;
  if (wakeAt !== undefined && wakeAt > Date.now() + 500) return run.release(wakeAt);
  wake(run);
  for (;;) {
    const here = locate(run);
    if (!here) return finish(run);
    const left = remainingMs() - HANDOFF_MARGIN_MS;
    if (left < stepBudgetMs(here.step)) return run.release();
    // A retry's next attempt is the same step execution: it is not counted again.
    const limit = retryInProgress(stateAt(run, here)) ? undefined : countStep(run);
    if (limit) return run.fail(limit);
    // Inside a loop this one write also holds the previous iteration's end: one write per iteration with an external effect.
    if (external(here.step) && run.dirty && !(await run.flush())) return;
    if (!(await runOne(run, here, left))) return;
  }
}

const stateBytes = (variables: unknown, outputs: unknown) => Buffer.byteLength(JSON.stringify({ variables, outputs }));
const tooLargeError = (step: { id: string }) => ({
  code: 'STATE_TOO_LARGE',
  message: `Variables and outputs exceed ${MAX_STATE_BYTES} bytes after step ${step.id}.`,
});
const fitsWith = (e: Execution, variables: Record<string, unknown>, outputs: Record<string, unknown>) =>
  stateBytes(variables, outputs) <= MAX_STATE_BYTES && executionItemBytes({ ...e, variables, outputs }) <= MAX_EXECUTION_ITEM_BYTES;
const isRecord = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Run one step and apply its outcome to the run; false when the run stopped (ended, waits, released, lost). */
async function runOne(run: HeldRun, here: Here, maxMs: number): Promise<boolean> {
  const e = run.e;
  const { step } = here;
  const startedAt = Date.now();
  const abort = new AbortController();
  const watch = step.type === 'http_request' ? watchForCancel(e, abort) : undefined;
  let outcome: Outcome;
  try {
    outcome = await runStep(step, { execution: e, scope: scopeOf(e), signal: abort.signal, now: startedAt, maxMs });
  } catch (err) {
    // An artifact upload the store refused is a failure its retry policy may judge.
    const failure = err instanceof StepError ? err : 'retry' in step && step.retry ? storageFailure(err) : undefined;
    if (!failure) throw err;
    outcome = { kind: 'failed', error: { code: failure.code, message: failure.message }, continueRun: false };
  } finally {
    if (watch) clearInterval(watch);
  }
  if (abort.signal.aborted) {
    await stopAfterLostWrite(e.accountId, e.executionId, run.owner);
    return false;
  }

  const now = Date.now();
  emit('StepDuration', now - startedAt);
  // A step re-entered by a retry (v1, or its own `retry` policy) keeps its attempt counts.
  const previous = stateAt(run, here);
  const attempts = previous?.attempts;
  const tries = currentAttempt(previous);
  const again = { ...(attempts ? { attempts } : {}), ...(tries > 1 ? { tries } : {}) };
  const iteration = iterationOf(run, here);
  const merge = here.loop !== undefined;
  const base: StepState = { stepId: step.id, type: step.type, status: 'SUCCEEDED', startedAt, finishedAt: now, ...again };
  const startedData = { stepId: step.id, type: step.type, ...iteration, ...(attempts ? { attempt: attempts } : {}) };
  const started = newEvent(e.executionId, 'step.started', startedData, startedAt);

  const retry = 'retry' in step ? step.retry : undefined;
  if (outcome.kind === 'failed') {
    const plan = planRetry(retry, { error: outcome.error, response: outcome.output }, tries, now);
    if (plan) return scheduleRetry(run, here, plan, started, { leftMs: maxMs - (now - startedAt), budgetMs: stepBudgetMs(step) });
  }
  // Retries exhausted (or a failure no retry cures): the last attempt's failure goes on to `onError`.
  if (retry && (outcome.kind === 'done' || outcome.kind === 'failed'))
    outcome = { ...outcome, output: withAttempts(retry, outcome.output, tries) };

  switch (outcome.kind) {
    case 'done': {
      const variables = { ...e.variables, ...outcome.variables };
      const outputs = outcome.output === undefined ? e.outputs : { ...e.outputs, [step.id]: outcome.output };
      if (!fitsWith(e, variables, outputs)) {
        const error = tooLargeError(step);
        setState(run, here, { ...base, status: 'FAILED', error });
        await run.fail(error, [started, newEvent(e.executionId, 'step.failed', { stepId: step.id, ...iteration, error }, now)]);
        return false;
      }
      const branch = outcome.branch ? { branch: outcome.branch } : {};
      setState(run, here, { ...base, ...branch });
      run.update({ variables, outputs });
      run.record(
        [started, newEvent(e.executionId, 'step.succeeded', { stepId: step.id, ...iteration, ...branch }, now)],
        outcome.items,
        merge,
      );
      advance(run, here, outcome.next ?? step.next, now);
      return external(step) && !merge ? run.flush() : true;
    }
    case 'failed':
      return stepFailed(run, here, outcome.error, {
        started,
        state: base,
        now,
        output: outcome.output,
        variables: outcome.variables,
        allowFailure: outcome.continueRun,
      });
    case 'skipped':
      setState(run, here, { ...base, status: 'SKIPPED' });
      advance(run, here, step.next, now);
      return true;
    case 'fail-run': {
      const error = outcome.error;
      setState(run, here, { ...base, status: 'FAILED', error });
      await run.fail(error, [started, newEvent(e.executionId, 'step.failed', { stepId: step.id, ...iteration, error }, now)]);
      return false;
    }
    case 'loop': {
      run.record([started], [], true);
      startLoop(run, step as ForEachStep, here.index, outcome.items, { ...base, status: 'RUNNING' }, now);
      if (!tooLarge(run)) return true;
      const error = tooLargeError(step);
      setState(run, here, { ...base, status: 'FAILED', error });
      await run.fail(error, [newEvent(e.executionId, 'step.failed', { stepId: step.id, error }, now)]);
      return false;
    }
    case 'wait-approval': {
      const position = run.e.loop;
      const a =
        here.loop && position
          ? {
              ...outcome.approval,
              loop: { stepId: here.loop.step.id, index: position.iteration, item: position.items[position.iteration] ?? null },
            }
          : outcome.approval;
      const links = {
        approve: link(APPROVAL_LINK_PATH, { approvalId: a.approvalId, decision: 'approve' }, '?api_key={API_KEY}'),
        reject: link(APPROVAL_LINK_PATH, { approvalId: a.approvalId, decision: 'reject' }, '?api_key={API_KEY}'),
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
          ...(a.loop ? { loop: a.loop } : {}),
        },
        now,
      );
      setState(run, here, { stepId: step.id, type: step.type, status: 'WAITING', startedAt, ...again });
      run.update({ approvalId: a.approvalId });
      run.record([started, requested]);
      // The approval keeps the seq of its approval.requested: its votes are numbered after it (VOTE_ROOM).
      run.record([], [approvalPut({ ...a, runSeq: run.e.seq }), ...nudgePut(a)]);
      await run.letGo({ status: 'WAITING_APPROVAL' });
      return false;
    }
    case 'wait-callback': {
      const c = outcome.callback;
      const data = {
        callbackId: c.callbackId,
        stepId: step.id,
        ...iteration,
        url: outcome.url,
        timeoutAt: c.timeoutAt,
        heartbeatSeconds: c.heartbeatSeconds ?? null,
      };
      // As an approval: the run waits at the step (inside a loop, in its iteration) until a report or the deadline.
      setState(run, here, { stepId: step.id, type: step.type, status: 'WAITING', startedAt, ...again });
      run.update({ callbackId: c.callbackId });
      run.record([started, newEvent(e.executionId, 'callback.requested', data, now)]);
      // What ends the wait is numbered after its callback.requested.
      run.record([], [callbackPut({ ...c, runSeq: run.e.seq })]);
      if (!(await run.letGo({ status: 'WAITING_CALLBACK' }))) return false;
      if (step.type === 'wait_for_callback') await sendCallbackRequest(run.e, step, outcome, maxMs - (Date.now() - startedAt));
      return false;
    }
    case 'sleep':
      // The run stays at the delay; its wake (`wake`) ends it and moves on.
      setState(run, here, { stepId: step.id, type: step.type, status: 'RUNNING', startedAt, ...again });
      run.update({ wakeAt: outcome.until });
      run.record([started], [], merge);
      await run.release(outcome.until);
      return false;
    default:
      return false;
  }
}

type Failure = {
  /** The step's `step.started`, when this failure is its end. */
  started?: RunEvent;
  /** The step's state as it ends (status and error are set here). */
  state: StepState;
  now: number;
  output?: unknown;
  variables?: Record<string, unknown>;
  /** An `http_request` with `allowFailure`: goes on as `onError: "continue"` does (without `error` in its output). */
  allowFailure?: boolean;
};

/**
 * The one failure path of a step: its `onError` decides. `"fail"` (default) fails the run, or, for a
 * step inside a loop, the loop step (whose own `onError` decides next); `"continue"` and `{ next }`
 * go on with `$steps.<id>.error` = `{ code, message, status? }`. False when the run stopped.
 */
export async function stepFailed(run: HeldRun, here: Here, error: RunError, f: Failure): Promise<boolean> {
  const { step } = here;
  const rule = step.onError ?? (f.allowFailure ? 'continue' : 'fail');
  const merge = here.loop !== undefined;
  const failed = newEvent(run.e.executionId, 'step.failed', { stepId: step.id, ...iterationOf(run, here), error }, f.now);
  const events = f.started ? [f.started, failed] : [failed];
  setState(run, here, { ...f.state, status: 'FAILED', finishedAt: f.now, error });
  if (rule === 'fail') {
    if (here.loop) {
      run.record(events, [], true);
      const loop = { step: here.loop.step, index: here.loop.index };
      const position = run.e.loop;
      const output = position && { items: position.items.length, results: position.results };
      return stepFailed(run, loop, error, { state: run.e.steps[loop.index] as StepState, now: f.now, output });
    }
    // The position (a loop's included) stays: a v1 retry re-enters this step.
    await run.fail(error, events);
    return false;
  }
  const output = step.onError !== undefined ? { ...(isRecord(f.output) ? f.output : {}), error } : f.output;
  const variables = { ...run.e.variables, ...f.variables };
  const outputs = output === undefined ? run.e.outputs : { ...run.e.outputs, [step.id]: output };
  if (!fitsWith(run.e, variables, outputs)) {
    await run.fail(tooLargeError(step), events);
    return false;
  }
  if (step.type === 'for_each' && run.e.loop) run.drop('loop');
  run.update({ variables, outputs });
  run.record(events, [], merge);
  advance(run, here, typeof rule === 'object' ? rule.next : step.next, f.now);
  return external(step) && !merge ? run.flush() : true;
}

/**
 * What ended a wait_for_callback (`reportTransition`), applied by the run's worker when it takes the
 * run again: the step's output (the run goes on with `$steps.<id>.output`), or its failure, a reported
 * one or a timeout with `onTimeout: "fail"`, which `stepFailed` applies (`onError`). The run waited at
 * the step, inside a loop too. False when the run stopped.
 */
async function applyReport(run: HeldRun): Promise<boolean> {
  const r = run.e.report;
  if (!r) return true;
  run.drop('report');
  await notifyEvents(run.e, [r.event]);
  const here = locate(run);
  if (!here || here.step.id !== r.stepId) {
    logger.error('callback report for a step the run is not at; dropped', { executionId: run.e.executionId, stepId: r.stepId });
    return true;
  }
  const state: StepState = { ...(stateAt(run, here) ?? { stepId: r.stepId, type: here.step.type, status: 'WAITING' }), finishedAt: r.at };
  const got = await reportedOutcome(run.e, r);
  if (got.error) return stepFailed(run, here, got.error, { state, now: r.at });
  const outputs = { ...run.e.outputs, [r.stepId]: got.output };
  const iteration = iterationOf(run, here);
  if (!fitsWith(run.e, run.e.variables, outputs)) {
    const error = tooLargeError(here.step);
    setState(run, here, { ...state, status: 'FAILED', error });
    await run.fail(error, [newEvent(run.e.executionId, 'step.failed', { stepId: r.stepId, ...iteration, error }, r.at)]);
    return false;
  }
  setState(run, here, { ...state, status: 'SUCCEEDED' });
  run.update({ outputs });
  run.record([newEvent(run.e.executionId, 'step.succeeded', { stepId: r.stepId, ...iteration }, r.at)], [], here.loop !== undefined);
  advance(run, here, here.step.next, r.at);
  return true;
}

/** Poll for a cancel request while a long step runs, and abort it when one arrives. */
function watchForCancel(e: Pick<Execution, 'accountId' | 'executionId'>, abort: AbortController) {
  return setInterval(() => {
    getExecution(e.accountId, e.executionId)
      .then((current) => {
        if (current?.cancelRequested) abort.abort();
      })
      .catch(() => undefined);
  }, CANCEL_POLL_MS);
}

/** The run's end: its output evaluated, SUCCEEDED (or FAILED with OUTPUT_FAILED), written with its last steps. */
async function finish(run: HeldRun): Promise<void> {
  const now = Date.now();
  // A delay that was the last step completes here (if its wake did not already end it).
  endDelays(run, now);
  let output: unknown = null;
  try {
    const template = run.definition?.output;
    output = template === undefined ? null : ((await evaluateTemplate(template, scopeOf(run.e))) ?? null);
  } catch (err) {
    if (!(err instanceof StepError)) throw err;
    return run.fail({ code: 'OUTPUT_FAILED', message: err.message });
  }
  run.append([newEvent(run.e.executionId, 'execution.succeeded', { output }, now)]);
  if (await run.end({ status: 'SUCCEEDED', output })) emit('ExecutionSucceeded');
}
