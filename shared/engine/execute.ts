import { config } from '../config.ts';
import { approvalPut } from '../db/entities/approval.ts';
import { nudgePut } from '../db/entities/approval-nudge.ts';
import { callbackPut } from '../db/entities/callback.ts';
import {
  type Execution,
  executionItemBytes,
  getExecution,
  MAX_EXECUTION_ITEM_BYTES,
  newEvent,
  type RunError,
  type RunEvent,
  type StepState,
} from '../db/entities/execution.ts';
import { logger } from '../logger.ts';
import { emit } from '../metrics.ts';
import type { Step } from './definition.ts';
import { evaluateTemplate } from './expressions.ts';
import { notifyEvents } from './notify.ts';
import { type HeldRun, stopAfterLostWrite } from './session.ts';
import { StepError } from './step-error.ts';
import { type Outcome, runStep, scopeOf } from './steps.ts';
import { reportedOutcome, sendCallbackRequest } from './steps/wait-for-callback.ts';
import { currentAttempt, planRetry, scheduleRetry, storageFailure, withAttempts } from './step-retry.ts';

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
export const stepBudgetMs = (step: Step) =>
  step.type === 'http_request'
    ? step.timeoutMs + 2_000
    : step.type === 'artifact'
      ? 10_000
      : step.type === 'wait_for_callback' && step.request
        ? step.request.timeoutMs + 2_000
        : 2_000;

/** Steps whose effect lives outside the run (a request sent, an object stored): the run's progress is written before them. */
const external = (step: Step) => step.type === 'http_request' || step.type === 'artifact';

/** Run the held run's steps until it ends, waits (approval, delay) or needs a fresh invocation. */
export async function executeSteps(run: HeldRun, remainingMs: () => number): Promise<void> {
  if (!(await applyDecision(run))) return;
  if (!(await applyReport(run))) return;
  const { wakeAt } = run.e;
  if (wakeAt !== undefined && wakeAt > Date.now() + 500) return run.release(wakeAt);
  endDelays(run);
  for (;;) {
    const index = run.e.nextStep;
    const step = run.definition?.steps[index];
    if (!step) return finish(run);
    const left = remainingMs() - HANDOFF_MARGIN_MS;
    if (left < stepBudgetMs(step)) return run.release();
    if (external(step) && run.dirty && !(await run.flush())) return;
    if (!(await runOne(run, step, index, left))) return;
  }
}

const stateBytes = (variables: unknown, outputs: unknown) => Buffer.byteLength(JSON.stringify({ variables, outputs }));

/** Run one step and apply its outcome to the run; false when the run stopped (ended, waits, released, lost). */
async function runOne(run: HeldRun, step: Step, index: number, maxMs: number): Promise<boolean> {
  const e = run.e;
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
  // A step re-entered by a retry keeps its attempt count.
  const attempts = e.steps[index]?.attempts;
  const again = { ...(attempts ? { attempts } : {}), ...(e.steps[index]?.tries ? { tries: e.steps[index]?.tries } : {}) };
  const base: StepState = { stepId: step.id, type: step.type, status: 'SUCCEEDED', startedAt, finishedAt: now, ...again };
  const startedData = { stepId: step.id, type: step.type, ...(attempts ? { attempt: attempts } : {}) };
  const started = newEvent(e.executionId, 'step.started', startedData, startedAt);
  const steps = (s: StepState) => e.steps.map((x, i) => (i === index ? s : x));

  const retry = 'retry' in step ? step.retry : undefined;
  const tries = currentAttempt(e.steps[index]);
  if (outcome.kind === 'failed') {
    const plan = planRetry(retry, { error: outcome.error, response: outcome.output }, tries, now);
    if (plan) return scheduleRetry(run, index, plan, started, { leftMs: maxMs - (now - startedAt), budgetMs: stepBudgetMs(step) });
  }
  if (retry && (outcome.kind === 'done' || outcome.kind === 'failed'))
    outcome = { ...outcome, output: withAttempts(retry, outcome.output, tries) };

  if (outcome.kind === 'done' || (outcome.kind === 'failed' && outcome.continueRun)) {
    const variables = { ...e.variables, ...outcome.variables };
    const outputs = outcome.output === undefined ? e.outputs : { ...e.outputs, [step.id]: outcome.output };
    if (stateBytes(variables, outputs) > MAX_STATE_BYTES || executionItemBytes({ ...e, variables, outputs }) > MAX_EXECUTION_ITEM_BYTES) {
      const message = `Variables and outputs exceed ${MAX_STATE_BYTES} bytes after step ${step.id}.`;
      outcome = { kind: 'failed', error: { code: 'STATE_TOO_LARGE', message }, continueRun: false };
    } else {
      const failed = outcome.kind === 'failed' ? outcome.error : undefined;
      run.update({ steps: steps(failed ? { ...base, status: 'FAILED', error: failed } : base), variables, outputs, nextStep: index + 1 });
      const done = newEvent(
        e.executionId,
        failed ? 'step.failed' : 'step.succeeded',
        { stepId: step.id, ...(failed ? { error: failed } : {}) },
        now,
      );
      run.record([started, done], outcome.kind === 'done' ? outcome.items : []);
      return external(step) ? run.flush() : true;
    }
  }
  switch (outcome.kind) {
    case 'skipped':
      run.update({ steps: steps({ ...base, status: 'SKIPPED' }), nextStep: index + 1 });
      return true;
    case 'failed':
    case 'fail-run': {
      const error = outcome.error;
      await failStep(run, index, { ...base, status: 'FAILED', error }, [
        started,
        newEvent(e.executionId, 'step.failed', { stepId: step.id, error }, now),
      ]);
      return false;
    }
    case 'wait-approval': {
      const a = outcome.approval;
      const base = config().PUBLIC_BASE_URL;
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
      run.update({ steps: steps({ stepId: step.id, type: step.type, status: 'WAITING', startedAt, ...again }), approvalId: a.approvalId });
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
        url: outcome.url,
        timeoutAt: c.timeoutAt,
        heartbeatSeconds: c.heartbeatSeconds ?? null,
      };
      run.update({ steps: steps({ stepId: step.id, type: step.type, status: 'WAITING', startedAt, ...again }), callbackId: c.callbackId });
      run.record([started, newEvent(e.executionId, 'callback.requested', data, now)]);
      // What ends the wait is numbered after its callback.requested.
      run.record([], [callbackPut({ ...c, runSeq: run.e.seq })]);
      if (!(await run.letGo({ status: 'WAITING_CALLBACK' }))) return false;
      if (step.type === 'wait_for_callback') await sendCallbackRequest(run.e, step, outcome, maxMs - (Date.now() - startedAt));
      return false;
    }
    case 'sleep':
      run.update({
        steps: steps({ stepId: step.id, type: step.type, status: 'RUNNING', startedAt, ...again }),
        nextStep: index + 1,
        wakeAt: outcome.until,
      });
      run.record([started]);
      await run.release(outcome.until);
      return false;
    default:
      return false;
  }
}

/**
 * An approval decision recorded on the run (`decisionTransition`) is applied by its worker: the
 * waiting step's output and state and the form values (the run goes on), or the run's failure (a
 * rejection with `onReject: "fail"`, an expiry with `onTimeout: "fail"`). False when the run ended.
 */
async function applyDecision(run: HeldRun): Promise<boolean> {
  const d = run.e.decision;
  if (!d) return true;
  run.drop('decision');
  await notifyEvents(run.e, [d.event]);
  const index = run.e.steps.findIndex((s) => s.stepId === d.stepId);
  if (index < 0) {
    logger.error('decision for a step the run does not have; dropped', { executionId: run.e.executionId, stepId: d.stepId });
    return true;
  }
  const outputs = { ...run.e.outputs, [d.stepId]: d.output };
  const steps = (s: Partial<StepState>) => run.e.steps.map((x, i) => (i === index ? { ...x, finishedAt: d.at, ...s } : x));
  // The approval step ends as its state says: step.failed when the decision fails the run, else step.succeeded.
  const ended = (type: 'step.succeeded' | 'step.failed', extra: Record<string, unknown> = {}) =>
    newEvent(run.e.executionId, type, { stepId: d.stepId, decision: d.output.decision, ...extra }, d.at);
  if (d.fails) {
    const error = { code: d.fails.code, message: d.fails.stepMessage };
    run.update({ steps: steps({ status: 'FAILED', error }), outputs });
    await run.fail({ code: d.fails.code, message: d.fails.message }, [ended('step.failed', { error })]);
    return false;
  }
  const variables = d.output.decision === 'approve' ? { ...run.e.variables, ...d.output.formData } : run.e.variables;
  run.update({ steps: steps({ status: 'SUCCEEDED' }), outputs, variables, nextStep: index + 1 });
  run.record([ended('step.succeeded')]);
  return true;
}

/**
 * A step that failed ends the run FAILED: its state, its events (`step.started`, `step.failed`) and the
 * run's end in one write. The one place a step's failure is applied (a failed attempt, a callback
 * reported failed or timed out with `onTimeout: "fail"`).
 */
async function failStep(run: HeldRun, index: number, state: StepState, events: RunEvent[]): Promise<void> {
  run.update({ steps: run.e.steps.map((x, i) => (i === index ? state : x)) });
  await run.fail(state.error as RunError, events);
}

/**
 * What ended a wait_for_callback (`reportTransition`), applied by the run's worker: the step's output
 * (the run goes on with `$steps.<id>.output`) or its failure. False when the run ended.
 */
async function applyReport(run: HeldRun): Promise<boolean> {
  const r = run.e.report;
  if (!r) return true;
  run.drop('report');
  await notifyEvents(run.e, [r.event]);
  const index = run.e.steps.findIndex((s) => s.stepId === r.stepId);
  if (index < 0) {
    logger.error('callback report for a step the run does not have; dropped', { executionId: run.e.executionId, stepId: r.stepId });
    return true;
  }
  const state = { ...(run.e.steps[index] as StepState), finishedAt: r.at };
  const got = await reportedOutcome(run.e, r);
  let error = got.error;
  if (!error) {
    const outputs = { ...run.e.outputs, [r.stepId]: got.output };
    if (stateBytes(run.e.variables, outputs) <= MAX_STATE_BYTES && executionItemBytes({ ...run.e, outputs }) <= MAX_EXECUTION_ITEM_BYTES) {
      run.update({
        steps: run.e.steps.map((x, i) => (i === index ? { ...state, status: 'SUCCEEDED' as const } : x)),
        outputs,
        nextStep: index + 1,
      });
      run.record([newEvent(run.e.executionId, 'step.succeeded', { stepId: r.stepId }, r.at)]);
      return true;
    }
    error = { code: 'STATE_TOO_LARGE', message: `Variables and outputs exceed ${MAX_STATE_BYTES} bytes after step ${r.stepId}.` };
  }
  await failStep(run, index, { ...state, status: 'FAILED', error }, [
    newEvent(run.e.executionId, 'step.failed', { stepId: r.stepId, error }, r.at),
  ]);
  return false;
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

/** A delay step whose wait is over ends (SUCCEEDED, with its step.succeeded): it was left RUNNING while the run slept. */
function endDelays(run: HeldRun, now = Date.now()) {
  const waited = run.e.steps.filter((s, i) => s.status === 'RUNNING' && s.type === 'delay' && i < run.e.nextStep);
  if (waited.length === 0) return;
  run.update({ steps: run.e.steps.map((s) => (waited.includes(s) ? { ...s, status: 'SUCCEEDED' as const, finishedAt: now } : s)) });
  run.record(waited.map((s) => newEvent(run.e.executionId, 'step.succeeded', { stepId: s.stepId }, now)));
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
