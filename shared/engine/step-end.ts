import type { Execution } from '../db/entities/execution.ts';
import type { RunError, StepState } from '../db/entities/execution-state.ts';
import { executionItemBytes, MAX_EXECUTION_ITEM_BYTES } from '../db/entities/execution-writes.ts';
import { newEvent, type RunEvent } from '../db/entities/run-events.ts';
import { advance, type Here, iterationOf, setState } from './flow.ts';
import type { HeldRun } from './session.ts';
import { isContainerType } from './steps/index.ts';

/** A step's end, shared by the step loop (./execute.ts) and the waits (./waits.ts): the failure path and the state's size. */

/** Variables and step outputs of a run, as JSON. */
export const MAX_STATE_BYTES = 256 * 1024;

const stateBytes = (variables: unknown, outputs: unknown) => Buffer.byteLength(JSON.stringify({ variables, outputs }));
export const tooLargeError = (step: { id: string }) => ({
  code: 'STATE_TOO_LARGE',
  message: `Variables and outputs exceed ${MAX_STATE_BYTES} bytes after step ${step.id}.`,
});
export const fitsWith = (e: Execution, variables: Record<string, unknown>, outputs: Record<string, unknown>) =>
  stateBytes(variables, outputs) <= MAX_STATE_BYTES && executionItemBytes({ ...e, variables, outputs }) <= MAX_EXECUTION_ITEM_BYTES;
const isRecord = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

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
  if (isContainerType(step.type) && run.e.loop) run.drop('loop');
  run.update({ variables, outputs });
  run.record(events, [], merge);
  advance(run, here, typeof rule === 'object' ? rule.next : step.next, f.now);
  // Its outcome is written with the run's next write (`HeldRun`: "after an effect").
  return true;
}
