// Control flow as data on the run (docs/architecture.md "Principles"): the step the run is in is
// `nextStep` and, inside a `for_each`, `loop` (iteration, nested step); a jump, a branch, an
// iteration's end only change them in memory, so they ride in the run's next write.
import type { LoopPosition, NestedStepState, RunError, StepState } from '../db/entities/execution-state.ts';
import { executionItemBytes, MAX_EXECUTION_ITEM_BYTES } from '../db/entities/execution-writes.ts';
import { newEvent } from '../db/entities/run-events.ts';
import { DEFAULT_MAX_STEP_EXECUTIONS, type WorkflowDefinition } from './definition.ts';
import { END } from './steps/common.ts';
import { type ContainerStep, isContainerType, type NestedStep, type Step, stepModule } from './steps/index.ts';
import type { HeldRun } from './session.ts';

/** Where the run is: a top-level step (`index` in the definition), or a nested one (`index` in its loop's steps). */
export type Here = { step: Step | NestedStep; index: number; loop?: { step: ContainerStep; index: number } };

/** The step the run is at, or none (past the last: the run ends). */
export function locate(run: HeldRun): Here | undefined {
  const index = run.e.nextStep;
  const step = run.definition?.steps[index];
  if (!step) return undefined;
  const loop = run.e.loop;
  if (isContainerType(step.type) && loop?.stepId === step.id) {
    const container = step as ContainerStep;
    const nested = container.steps[loop.next];
    if (nested) return { step: nested, index: loop.next, loop: { step: container, index } };
  }
  return { step, index };
}

/** Events of a step inside a loop name the iteration. */
export const iterationOf = (run: HeldRun, here: Here) => (here.loop && run.e.loop ? { iteration: run.e.loop.iteration } : {});

export const stateAt = (run: HeldRun, here: Here): StepState | undefined =>
  here.loop ? run.e.steps[here.loop.index]?.steps?.[here.index] : run.e.steps[here.index];

const pending = (steps: readonly NestedStep[]): NestedStepState[] => steps.map((s) => ({ stepId: s.id, type: s.type, status: 'PENDING' }));

function setTop(run: HeldRun, index: number, state: StepState) {
  run.update({ steps: run.e.steps.map((x, i) => (i === index ? state : x)) });
}

/** Replace the state of the step at `here` (a nested one: inside its loop's state, for this iteration). */
export function setState(run: HeldRun, here: Here, state: StepState) {
  if (!here.loop) return setTop(run, here.index, state);
  const parent = run.e.steps[here.loop.index] ?? { stepId: here.loop.step.id, type: here.loop.step.type, status: 'RUNNING' as const };
  const nested = parent.steps ?? pending(here.loop.step.steps);
  // A loop re-entered by a v1 retry shows RUNNING again with its first nested step.
  const status = parent.status === 'PENDING' ? 'RUNNING' : parent.status;
  setTop(run, here.loop.index, { ...parent, status, steps: nested.map((x, i) => (i === here.index ? state : x)) });
}

const flowCache = new WeakMap<WorkflowDefinition, boolean>();
/** Can the run execute a step more than once (jumps, loops), or does it set a limit? Then it counts its steps on the record. */
function countsSteps(def: WorkflowDefinition): boolean {
  let v = flowCache.get(def);
  if (v === undefined) {
    v =
      def.maxStepExecutions !== undefined ||
      def.steps.some((s) => s.next !== undefined || s.onError !== undefined || stepModule(s).movesRun === true);
    flowCache.set(def, v);
  }
  return v;
}

/**
 * Count one more step execution; the error when the run has executed `maxStepExecutions` already.
 * A straight run (no jumps, no loops) executes each step once: its count is `nextStep`, nothing stored.
 */
export function countStep(run: HeldRun): RunError | undefined {
  const def = run.definition;
  if (!def) return undefined;
  const limit = def.maxStepExecutions ?? DEFAULT_MAX_STEP_EXECUTIONS;
  const done = run.e.executed ?? run.e.nextStep;
  if (done >= limit) return { code: 'STEP_LIMIT_EXCEEDED', message: `The run executed ${limit} steps, its limit (maxStepExecutions).` };
  if (countsSteps(def)) run.update({ executed: done + 1 });
  return undefined;
}

/** The run is too large to store (its loop's items and results count). */
export const tooLarge = (run: HeldRun) => executionItemBytes(run.e) > MAX_EXECUTION_ITEM_BYTES;

/**
 * Move past the step at `here` to `target` (its `next`, a branch, an `onError` target; absent: the
 * following step). Past a loop's last nested step the iteration ends; `"$end"` ends the run.
 */
export function advance(run: HeldRun, here: Here, target: string | undefined, now = Date.now()) {
  const steps = run.definition?.steps ?? [];
  if (target === END) {
    if (here.loop) closeLoop(run, here.loop, now);
    return run.update({ nextStep: steps.length });
  }
  if (!here.loop) {
    const to = target === undefined ? here.index + 1 : steps.findIndex((s) => s.id === target);
    return run.update({ nextStep: to < 0 ? steps.length : to });
  }
  const list = here.loop.step.steps;
  const next = target === undefined ? here.index + 1 : list.findIndex((s) => s.id === target);
  const position = run.e.loop as LoopPosition;
  if (next >= 0 && next < list.length) return run.update({ loop: { ...position, next } });
  endIteration(run, here.loop, now);
}

/** Nested steps' outputs are the current iteration's: a new iteration starts without them. */
function withoutNested(run: HeldRun, loop: ContainerStep) {
  const outputs = { ...run.e.outputs };
  for (const s of loop.steps) delete outputs[s.id];
  return outputs;
}

/** Enter `for_each` at `index` with its items: the first iteration, or at once its end when there are none. */
export function startLoop(run: HeldRun, step: ContainerStep, index: number, items: unknown[], started: StepState, now: number) {
  setTop(run, index, { ...started, status: 'RUNNING', items: items.length, iteration: 0, steps: pending(step.steps) });
  run.update({ loop: { stepId: step.id, items, iteration: 0, next: 0, results: [] }, outputs: withoutNested(run, step) });
  if (items.length === 0) endIteration(run, { step, index }, now, false);
}

/** An iteration is over: its result (the last nested step's output) kept, then the next one, or the loop's end. */
function endIteration(run: HeldRun, loop: NonNullable<Here['loop']>, now: number, ran = true) {
  const position = run.e.loop as LoopPosition;
  const last = loop.step.steps.at(-1);
  const results = ran ? [...position.results, (last && run.e.outputs[last.id]) ?? null] : position.results;
  const iteration = ran ? position.iteration + 1 : position.iteration;
  run.update({ loop: { ...position, iteration, next: 0, results } });
  if (iteration >= position.items.length) {
    closeLoop(run, loop, now);
    return advance(run, { step: loop.step, index: loop.index }, loop.step.next, now);
  }
  const parent = run.e.steps[loop.index];
  setTop(run, loop.index, { ...(parent as StepState), iteration, steps: pending(loop.step.steps) });
  run.update({ outputs: withoutNested(run, loop.step) });
}

/** The loop's end (all its items, or a `"$end"` inside it): its output, SUCCEEDED, no position left. */
function closeLoop(run: HeldRun, loop: NonNullable<Here['loop']>, now: number) {
  const position = run.e.loop as LoopPosition;
  const parent = run.e.steps[loop.index] as StepState;
  setTop(run, loop.index, { ...parent, status: 'SUCCEEDED', finishedAt: now, iteration: position.iteration });
  run.update({ outputs: { ...run.e.outputs, [loop.step.id]: { items: position.items.length, results: position.results } } });
  run.drop('loop');
  run.record([newEvent(run.e.executionId, 'step.succeeded', { stepId: loop.step.id, items: position.items.length }, now)], [], true);
}
