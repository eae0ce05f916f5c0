import { type Execution, getExecution } from '../db/entities/execution.ts';
import type { StepState } from '../db/entities/execution-state.ts';
import { newEvent } from '../db/entities/run-events.ts';
import { emit } from '../metrics.ts';
import { StepError } from '../step-error.ts';
import { evaluateTemplate } from './expressions.ts';
import { advance, countStep, type Here, iterationOf, locate, setState, startLoop, stateAt, tooLarge } from './flow.ts';
import { runStep } from './run-step.ts';
import { scopeOf } from './scope.ts';
import { Pace } from './pace.ts';
import { stopAfterLostWrite } from './lost-write.ts';
import type { HeldRun } from './session.ts';
import { fitsWith, stepFailed, tooLargeError } from './step-end.ts';
import { STEP_IO } from './step-io.ts';
import { currentAttempt, planRetry, retryInProgress, scheduleRetry, storageFailure, withAttempts } from './step-retry.ts';
import { type ContainerStep, type NestedStep, type Step, stepModule } from './steps/index.ts';
import type { Outcome } from './steps/types.ts';
import { applyDecision, applyReport, endDelays, wake } from './waits.ts';

/** Time kept back at the end of an invocation for the last write and the hand-off to a new message. */
export const HANDOFF_MARGIN_MS = 5_000;
const CANCEL_POLL_MS = 1_000;

/**
 * The longest a step may take (its module's `budgetMs`: an http_request its timeout and the address
 * checks, an artifact its upload, any other step its expressions, each budgeted at 1 s). A step starts
 * only when this fits in what is left of the invocation; otherwise the run goes to a fresh invocation
 * first, so a slow step never times the invocation out (and with it the other runs of its batch).
 */
export const stepBudgetMs = (step: Step | NestedStep) => stepModule(step).budgetMs(step);

/** Steps whose effect lives outside the run (a request sent, an object stored): the run's progress is written before them. */
const external = (step: Step | NestedStep) => stepModule(step).externalEffect;

/**
 * Run the held run's steps until it ends, waits (approval, callback, delay, a retry's backoff) or needs
 * a fresh invocation (its time is short, or it did its `pace`'s share).
 */
export async function executeSteps(run: HeldRun, remainingMs: () => number, pace = new Pace()): Promise<void> {
  if (!(await applyDecision(run))) return;
  if (!(await applyReport(run))) return;
  const { wakeAt } = run.e;
  if (wakeAt !== undefined && wakeAt > Date.now() + 500) return run.release(wakeAt);
  wake(run);
  for (;;) {
    const here = locate(run);
    if (!here) return finish(run);
    // A run its trigger executes goes up to its first step that needs more than memory, and is written there.
    if (run.handsOff && !stepModule(here.step).inline) return void run.handOff();
    const left = remainingMs() - HANDOFF_MARGIN_MS;
    // Out of time for the step, or this invocation did its share of the run's steps: a fresh invocation goes on.
    if (left < stepBudgetMs(here.step) || pace.spent) return run.release();
    // A retry's next attempt is the same step execution: it is not counted again.
    const limit = retryInProgress(stateAt(run, here)) ? undefined : countStep(run);
    if (limit) return run.fail(limit);
    // Inside a loop this one write also holds the previous iteration's end: one write per iteration with an external effect.
    // A long run of in-memory steps writes a checkpoint whenever its progress fills one write (`full`).
    if (((external(here.step) && run.progressed) || run.full) && !(await run.flush())) return;
    if (!(await runOne(run, here, left))) return;
    await pace.stepped();
  }
}

/** Run one step and apply its outcome to the run; false when the run stopped (ended, waits, released, lost). */
async function runOne(run: HeldRun, here: Here, maxMs: number): Promise<boolean> {
  const e = run.e;
  const { step } = here;
  const startedAt = Date.now();
  const abort = new AbortController();
  const watch = stepModule(step).abortsOnCancel ? watchForCancel(e, abort) : undefined;
  let outcome: Outcome;
  try {
    const loop =
      here.loop && e.loop
        ? { stepId: here.loop.step.id, iteration: e.loop.iteration, item: e.loop.items[e.loop.iteration] ?? null }
        : undefined;
    outcome = await runStep(step, {
      execution: e,
      scope: scopeOf(e),
      signal: abort.signal,
      now: startedAt,
      io: run.io ?? STEP_IO,
      maxMs,
      loop,
    });
  } catch (err) {
    // A step fault is an outcome; an artifact upload the store refused is a failure its retry policy may judge.
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
      // Its outcome is written with the run's next write (`HeldRun`: "after an effect").
      return true;
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
      startLoop(run, step as ContainerStep, here.index, outcome.items, { ...base, status: 'RUNNING' }, now);
      if (!tooLarge(run)) return true;
      const error = tooLargeError(step);
      setState(run, here, { ...base, status: 'FAILED', error });
      await run.fail(error, [newEvent(e.executionId, 'step.failed', { stepId: step.id, error }, now)]);
      return false;
    }
    case 'wait': {
      // The run waits at the step (inside a loop, in its iteration) for what ends the wait (./waits.ts).
      setState(run, here, { stepId: step.id, type: step.type, status: 'WAITING', startedAt, ...again });
      run.update(outcome.update);
      run.record([started, newEvent(e.executionId, outcome.event.type, outcome.event.data, now)]);
      // What ends the wait is numbered after the event that started it.
      run.record([], outcome.items(run.e.seq));
      const held = await run.letGo({ status: outcome.status });
      if (held && outcome.after) await outcome.after(run.e, maxMs - (Date.now() - startedAt));
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
      return unknownOutcome(outcome);
  }
}

/** Every outcome kind is handled above: a new one does not compile until it is. */
function unknownOutcome(outcome: never): never {
  throw new Error(`unknown step outcome ${(outcome as { kind?: unknown }).kind}`);
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
