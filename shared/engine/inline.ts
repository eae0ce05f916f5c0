import type { Execution } from '../db/entities/execution.ts';
import type { RunEvent } from '../db/entities/run-events.ts';
import type { Workflow } from '../db/entities/workflow.ts';
import type { WorkflowDefinition } from './definition.ts';
import { nestedOf } from './every-step.ts';
import { executeSteps } from './execute.ts';
import { Pace } from './pace.ts';
import { resolveRun } from './runs.ts';
import { NotInline } from './run-items.ts';
import { HeldRun } from './session.ts';
import type { Defined } from './versions.ts';
import { stepModule } from './steps/index.ts';

/**
 * Runs that start in their trigger (docs/runs-and-events.md "Runs that finish in their trigger"). A run
 * whose steps all change only the run and wait for nothing (`set`, `switch`, `fail`, a `for_each` of
 * those: their modules' `inline`) has nothing a queue and a worker would add: no effect to write
 * progress before, no time to wait out. Its trigger executes it in memory, on the same step loop a
 * worker uses, and writes it once, ended: no queue message, no claim, no second invocation.
 *
 * A run whose first steps are such steps and a later one is not (an `http_request`, an approval) is
 * executed the same way up to that step, which does not run here: the start writes the run there,
 * handed to its message, with the events of the steps it ran, as the worker would have written it
 * before that step (`HeldRun.handOff`). The worker's claim goes on from there, with one write fewer.
 *
 * What it may spend there is bounded (`INLINE_SHARE`: steps and milliseconds); a run that needs more,
 * or would wait or sleep after all (a step's retry backoff), is queued as any other run, with nothing
 * of its in-memory progress kept (there was no effect to keep).
 */
export const INLINE_SHARE = { steps: 1_000, ms: 50 };

/** The longest a step of an inline run may be planned to take (the step loop's check before each step). */
const INLINE_TIME_MS = 60_000;

/**
 * Whether a definition's runs start in their trigger: no notification target (the trigger sends none)
 * and a first step that needs nothing but memory. They finish there when every step they reach does
 * (`inline`); otherwise they go as far as their first step that needs more, and are handed to the worker there.
 */
export const runsInline = (def: WorkflowDefinition) => !def.notifications?.length && def.steps[0] !== undefined && isInline(def.steps[0]);

/** Whether a step and every step nested in it change only the run and wait for nothing. */
const isInline = (step: WorkflowDefinition['steps'][number]) => [step, ...nestedOf(step)].every((s) => stepModule(s).inline === true);

/**
 * Execute a run that is about to be written (`execution`, PENDING, and its first event `started`)
 * in memory, to its end or to its first step that needs a worker (`handedOff`). Returns the items that
 * write it so (the run, its events), or undefined when it is to be queued as written (inputs the
 * workflow refuses go to the worker, which fails the run as for any start by reference; a run that
 * outgrows `INLINE_SHARE` or must wait).
 */
export async function runInline(
  execution: Execution,
  started: RunEvent,
  workflow: Defined<Workflow>,
): Promise<{ items: Record<string, unknown>[]; run: Execution; handedOff: boolean } | undefined> {
  // What the worker would fail the run for, it fails there: such a run is queued.
  const resolved = resolveRun(execution, workflow);
  if (resolved.error) return undefined;
  const { dispatch, ...created } = structuredClone(execution);
  const e: Execution = { ...created, ...resolved.fields, status: 'RUNNING', seq: 0 };
  const run = HeldRun.unwritten(e, workflow.definition, dispatch as string);
  run.record([{ ...started, seq: undefined }]);
  try {
    await executeSteps(run, () => INLINE_TIME_MS, new Pace(INLINE_SHARE));
  } catch (err) {
    if (err instanceof NotInline) return undefined;
    throw err;
  }
  const items = run.endedItems;
  return items ? { items, run: run.e, handedOff: run.handedOff } : undefined;
}
