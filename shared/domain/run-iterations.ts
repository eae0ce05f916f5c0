import { isContainerType } from '../engine/steps/index.ts';
import type { Execution } from '../db/entities/execution.ts';
import { iterationEvents, type RunEvent } from '../db/entities/run-events.ts';

// One iteration of a run's `for_each`, for the run page's iteration browser: its events (its nested
// steps' starts, ends, errors and waits), its item and its result when the run still has them. From
// the run's log when the page read it whole; else one filtered Query from the loop's start
// (`iterationEvents`, shared/db/entities/run-events.ts): never a page-by-page walk of the log.

/** The page shows iterations 1-based ("iteration 35" is index 34). */
export type IterationRead =
  | { loop: string; index: number; found: true; events: RunEvent[]; item?: { value: unknown }; result?: { value: unknown } }
  | { loop: string; index: number; found: false; why: string };

/** The loop's own steps' events of iteration `index` (another loop's iteration of that number is not this one's). */
const ofLoop = (events: readonly RunEvent[], nested: ReadonlySet<string>, index: number) =>
  events.filter((ev) => ev.data.iteration === index && typeof ev.data.stepId === 'string' && nested.has(ev.data.stepId));

/**
 * Iteration `index` (0-based) of the run's `for_each` `loopId`, its loop's last execution. `log`: the
 * run's whole log when the caller has it (then no read). Its nested steps are those of the loop's state.
 */
export async function readIteration(
  e: Execution,
  loopId: string,
  index: number,
  log: readonly RunEvent[] | undefined,
): Promise<IterationRead> {
  const state = e.steps.find((s) => s.stepId === loopId);
  if (!isContainerType(state?.type) || !state) return { loop: loopId, index, found: false, why: `The run has no for_each step ${loopId}.` };
  if (state.items === undefined || state.startedAt === undefined)
    return { loop: loopId, index, found: false, why: `The loop ${loopId} has not started.` };
  if (index >= state.items)
    return {
      loop: loopId,
      index,
      found: false,
      why: `The loop ${loopId} has ${state.items} ${state.items === 1 ? 'iteration' : 'iterations'}: there is no iteration ${index + 1}.`,
    };
  const nested = new Set((state.steps ?? []).map((s) => s.stepId));
  const since = state.startedAt;
  const events = log
    ? ofLoop(
        log.filter((ev) => ev.at >= since),
        nested,
        index,
      )
    : ofLoop(await iterationEvents(e.accountId, e.executionId, since, index), nested, index);
  const position = e.loop?.stepId === loopId ? e.loop : undefined;
  const output = e.outputs[loopId] as { results?: unknown[] } | undefined;
  const results = position?.results ?? (Array.isArray(output?.results) ? output.results : undefined);
  return {
    loop: loopId,
    index,
    found: true,
    events,
    ...(position && index < position.items.length ? { item: { value: position.items[index] } } : {}),
    ...(results && index < results.length ? { result: { value: results[index] } } : {}),
  };
}
