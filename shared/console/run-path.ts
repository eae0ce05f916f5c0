import type { RunEvent, StepState } from '../domain/read-types.ts';
import { type Bar, timelineOf } from './run-timeline.ts';

/**
 * The path a run took through its workflow's graph, for the graph on the run's page to draw
 * (`WorkflowGraph`'s "taken path"): the step ids it visited (top-level and nested, skipped ones
 * too: the run passed them), in the order it first reached them, and the edges it went along, each
 * once. An edge joins two steps the run visited one after the other at the same level (a `next`, a
 * `switch` case, an `onError` target or just the following step; a jump back too), or a `for_each`
 * and the first nested step of an iteration. Its end is not an edge.
 *
 * From the run's step states alone (`execution.steps`) each step counts once and a loop's earlier
 * iterations are unknown; with the run's events (`events`, the whole log, oldest first) it is exact.
 */
export type TakenPath = { steps: string[]; edges: { from: string; to: string }[] };

export function takenPath(steps: readonly StepState[], events?: readonly RunEvent[]): TakenPath {
  return pathOf(timelineOf(events, steps).bars);
}

/** The path along the bars of a timeline (in the order the run entered them). */
export function pathOf(bars: readonly Bar[]): TakenPath {
  const visited: string[] = [];
  const edges: TakenPath['edges'] = [];
  const seen = new Set<string>();
  const edge = (from: string, to: string) => {
    const key = `${from}\u0000${to}`;
    if (from === to || seen.has(key)) return;
    seen.add(key);
    edges.push({ from, to });
  };
  let previous: string | undefined;
  const inIteration = new Map<string, string>();
  for (const b of bars) {
    if (!visited.includes(b.stepId)) visited.push(b.stepId);
    if (b.loop === undefined) {
      if (previous !== undefined) edge(previous, b.stepId);
      previous = b.stepId;
      continue;
    }
    const where = `${b.loop}#${b.iteration ?? 0}`;
    edge(inIteration.get(where) ?? b.loop, b.stepId);
    inIteration.set(where, b.stepId);
  }
  return { steps: visited, edges };
}
