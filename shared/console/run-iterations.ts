import type { StepState } from '../domain/read-types.ts';
import type { Bar } from './run-timeline.ts';

// The status of each iteration of a run's `for_each`, for the run page's iteration browser. Pure.
// From the loop's state alone: the iterations before the current one are done, the current one is in
// the loop's (or its nested steps') status, the later ones not reached. With the run's whole log
// (`exact`) each iteration's own bars say more: one whose step failed (an `onError` went on) is FAILED.

export const ITERATION_STATUSES = ['SUCCEEDED', 'FAILED', 'RUNNING', 'WAITING', 'CANCELLED', 'INTERRUPTED', 'NOT_REACHED'] as const;
export type IterationStatus = (typeof ITERATION_STATUSES)[number];
/** Iterations listed per page of the browser. */
export const ITERATIONS_PAGE = 20;

/** The status a step state's (or a bar's) status gives its iteration, if it says more than "done". */
function telling(status: string): IterationStatus | undefined {
  if (status === 'FAILED' || status === 'TIMED_OUT') return 'FAILED';
  if (status.startsWith('WAITING')) return 'WAITING';
  if (status === 'RUNNING') return 'RUNNING';
  if (status === 'CANCELLED') return 'CANCELLED';
  if (status === 'INTERRUPTED') return 'INTERRUPTED';
  return undefined;
}

const ORDER: IterationStatus[] = ['FAILED', 'CANCELLED', 'INTERRUPTED', 'WAITING', 'RUNNING'];
const worst = (all: (IterationStatus | undefined)[]) => ORDER.find((s) => all.includes(s));

/** Each iteration's status, index 0 first (`loop.items` of them). */
export function iterationStatuses(loop: StepState, bars: readonly Bar[], exact: boolean): IterationStatus[] {
  const n = loop.items ?? 0;
  const current = Math.min(loop.iteration ?? 0, n);
  const own = new Map<number, Bar[]>();
  if (exact)
    for (const b of bars)
      if (b.loop === loop.stepId && b.iteration !== undefined) own.set(b.iteration, [...(own.get(b.iteration) ?? []), b]);
  const here =
    worst([...(loop.steps ?? []).map((s) => telling(s.status)), telling(loop.status)]) ??
    (loop.status === 'SUCCEEDED' ? 'SUCCEEDED' : 'RUNNING');
  return Array.from({ length: n }, (_, i): IterationStatus => {
    const mine = own.get(i);
    if (mine?.length) {
      const told = worst(mine.map((b) => telling(b.status)));
      if (told) return told;
      if (i !== current) return 'SUCCEEDED';
    }
    if (i < current) return 'SUCCEEDED';
    if (i === current) return here;
    return 'NOT_REACHED';
  });
}

/** The browser's rows: the iterations of `status` (all without one), `ITERATIONS_PAGE` from `from` on, and how many there are. */
export function iterationPage(statuses: readonly IterationStatus[], status: IterationStatus | undefined, from: number) {
  const matching = statuses.flatMap((s, i) => (status === undefined || s === status ? [{ index: i, status: s }] : []));
  const start = Math.min(Math.max(0, from), Math.max(0, matching.length - 1));
  const first = start - (start % ITERATIONS_PAGE);
  return { rows: matching.slice(first, first + ITERATIONS_PAGE), total: matching.length, from: first };
}

/** How many iterations have each status. */
export const countByStatus = (statuses: readonly IterationStatus[]) => {
  const counts = new Map<IterationStatus, number>();
  for (const s of statuses) counts.set(s, (counts.get(s) ?? 0) + 1);
  return counts;
};
