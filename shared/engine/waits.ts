// What ends a wait, applied by the run's worker when it takes the run again: an approval's decision,
// a callback's report, a sleeping step's wake (a delay's). Each leaves the run at the step after the one
// that waited (`advance`), or fails it.
import type { StepState } from '../db/entities/execution-state.ts';
import { newEvent } from '../db/entities/run-events.ts';
import { logger } from '../logger.ts';
import { advance, iterationOf, locate, setState, stateAt } from './flow.ts';
import type { HeldRun } from './session.ts';
import { fitsWith, stepFailed, tooLargeError } from './step-end.ts';
import { moduleOf } from './steps/index.ts';

/**
 * An approval decision recorded on the run (`decisionTransition`) is applied by its worker: the
 * waiting step's output and state and the form values (the run goes on), or the run's failure (a
 * rejection with `onReject: "fail"`, an expiry with `onTimeout: "fail"`). False when the run ended.
 */
export async function applyDecision(run: HeldRun): Promise<boolean> {
  const d = run.e.decision;
  if (!d) return true;
  run.drop('decision');
  await run.notify([d.event]);
  // The run waited at its approval: it is where the run is (inside a loop too).
  const here = locate(run);
  if (!here || here.step.id !== d.stepId) {
    logger.error('decision for a step the run is not at; dropped', { executionId: run.e.executionId, stepId: d.stepId });
    return true;
  }
  const outputs = { ...run.e.outputs, [d.stepId]: d.output };
  const state = { ...(stateAt(run, here) ?? { stepId: d.stepId, type: here.step.type }), finishedAt: d.at };
  const iteration = iterationOf(run, here);
  // The approval step ends as its state says: step.failed when the decision fails the run, else step.succeeded.
  const ended = (type: 'step.succeeded' | 'step.failed', extra: Record<string, unknown> = {}) =>
    newEvent(run.e.executionId, type, { stepId: d.stepId, ...iteration, decision: d.output.decision, ...extra }, d.at);
  if (d.fails) {
    const error = { code: d.fails.code, message: d.fails.stepMessage };
    setState(run, here, { ...state, status: 'FAILED', error });
    run.update({ outputs });
    await run.fail({ code: d.fails.code, message: d.fails.message }, [ended('step.failed', { error })]);
    return false;
  }
  const variables = d.output.decision === 'approve' ? { ...run.e.variables, ...d.output.formData } : run.e.variables;
  setState(run, here, { ...state, status: 'SUCCEEDED' });
  run.update({ outputs, variables });
  run.record([ended('step.succeeded')], [], here.loop !== undefined);
  advance(run, here, here.step.next, d.at);
  return true;
}

/** The delay the run slept in is over: it ends (SUCCEEDED, with its step.succeeded) and the run moves past it. */
export function wake(run: HeldRun, now = Date.now()) {
  endDelays(run, now);
  const here = locate(run);
  const state = here && stateAt(run, here);
  if (!here || !moduleOf(here.step.type)?.sleeps || state?.status !== 'RUNNING') return;
  setState(run, here, { ...state, status: 'SUCCEEDED', finishedAt: now });
  run.record(
    [newEvent(run.e.executionId, 'step.succeeded', { stepId: here.step.id, ...iterationOf(run, here) }, now)],
    [],
    here.loop !== undefined,
  );
  advance(run, here, here.step.next, now);
}

/** Runs that slept before a delay kept its place (it left RUNNING delays behind `nextStep`): those end too. */
export function endDelays(run: HeldRun, now = Date.now()) {
  const waited = run.e.steps.filter((s, i) => s.status === 'RUNNING' && moduleOf(s.type)?.sleeps && i < run.e.nextStep);
  if (waited.length === 0) return;
  run.update({ steps: run.e.steps.map((s) => (waited.includes(s) ? { ...s, status: 'SUCCEEDED' as const, finishedAt: now } : s)) });
  run.record(waited.map((s) => newEvent(run.e.executionId, 'step.succeeded', { stepId: s.stepId }, now)));
}

/**
 * What ended a wait_for_callback (`reportTransition`), applied by the run's worker when it takes the
 * run again: the step's output (the run goes on with `$steps.<id>.output`), or its failure, a reported
 * one or a timeout with `onTimeout: "fail"`, which `stepFailed` applies (`onError`). The run waited at
 * the step, inside a loop too. False when the run stopped.
 */
export async function applyReport(run: HeldRun): Promise<boolean> {
  const r = run.e.report;
  if (!r) return true;
  run.drop('report');
  await run.notify([r.event]);
  const here = locate(run);
  if (!here || here.step.id !== r.stepId) {
    logger.error('callback report for a step the run is not at; dropped', { executionId: run.e.executionId, stepId: r.stepId });
    return true;
  }
  const state: StepState = { ...(stateAt(run, here) ?? { stepId: r.stepId, type: here.step.type, status: 'WAITING' }), finishedAt: r.at };
  const got = await run.reported(r);
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
