import type { RunError, RunEvent, StepState } from '../domain/read-types.ts';
import { isContainerType, sleepsType } from '../engine/steps/index.ts';

// A run's timeline as data: one bar per executed step (a step inside a `for_each` once per iteration),
// with the waits inside it (an approval, a callback, a delay, a retry's backoff). Built from the run's
// event log, which has every execution of every step; the run's step states keep only the last one
// (and of a loop's nested steps only the current iteration's), so they are the fallback when the log
// is longer than the page reads (`fromSteps`). Pure: the page draws it (timeline.tsx).

export type WaitKind = 'approval' | 'callback' | 'delay' | 'retry';
/** A stretch of a bar in which the run waited for something outside it: drawn compressed, its duration written. */
export type Wait = { kind: WaitKind; start: number; end?: number };

export type Bar = {
  stepId: string;
  type: string;
  status: string;
  /** Inside a `for_each`: the loop's step id and the iteration (0-based). */
  loop?: string;
  iteration?: number;
  start: number;
  /** Absent while the step runs or waits (drawn up to now). */
  end?: number;
  /** Attempts made by the step's own `retry` policy in this execution (1 without retries). */
  tries: number;
  /** The run's retry (v1 retry) that re-entered the step: 2 for the first retry. */
  attempt?: number;
  waits: Wait[];
  error?: RunError;
  /** A `for_each`: how many items. */
  items?: number;
  /** A `switch`: the case taken and the step it named. */
  branch?: { case: number | 'default'; next: string };
};

export type Timeline = {
  bars: Bar[];
  /** Built from the step states (the log was longer than read): the loops' earlier iterations are missing. */
  fromStates: boolean;
};

const WAIT_OF: Record<string, WaitKind> = { 'approval.requested': 'approval', 'callback.requested': 'callback' };

const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
const int = (v: unknown) => (typeof v === 'number' && Number.isInteger(v) ? v : undefined);
const keyOf = (stepId: string, iteration: number | undefined) => `${stepId}#${iteration ?? ''}`;

/** An error as recorded on an event (`{ code, message }`), or none. */
function errorOf(v: unknown): RunError | undefined {
  if (typeof v !== 'object' || v === null) return undefined;
  const e = v as Record<string, unknown>;
  return typeof e.code === 'string' ? { code: e.code, message: str(e.message) ?? '' } : undefined;
}

/** The events in the order the run wrote them (`seq`; votes of a quorum sit right after their request). */
const inOrder = (events: readonly RunEvent[]) =>
  events.every((e) => e.seq !== undefined) ? [...events].sort((a, b) => (a.seq as number) - (b.seq as number)) : [...events];

const closeWaits = (b: Bar, at: number) => {
  for (const w of b.waits) w.end ??= Math.max(w.start, at);
};

/**
 * The bars of a run from its whole event log (oldest first). A step's attempts under its `retry`
 * policy are one bar with the backoffs as waits; a step re-entered by a v1 retry or after an
 * interruption is a new bar. Steps skipped by their `when` write no event: they come from `steps`.
 */
export function fromEvents(events: readonly RunEvent[], steps: readonly StepState[]): Bar[] {
  const bars: Bar[] = [];
  const open = new Map<string, Bar & { retrying?: boolean }>();
  let loop: string | undefined;
  for (const ev of inOrder(events)) {
    const d = ev.data;
    const stepId = str(d.stepId);
    const iteration = int(d.iteration) ?? int((d.loop as { index?: unknown } | undefined)?.index);
    const key = stepId === undefined ? '' : keyOf(stepId, iteration);
    const bar = open.get(key);
    switch (ev.type) {
      case 'step.started': {
        if (stepId === undefined) break;
        if (bar?.retrying) {
          // The next attempt of a step with a retry policy: the same execution, its backoff over.
          closeWaits(bar, ev.at);
          bar.tries += 1;
          bar.retrying = false;
          bar.status = 'RUNNING';
          break;
        }
        if (bar) {
          // Entered again before it ended (an interruption, then a resume): that execution stopped here.
          bar.end = ev.at;
          bar.status = 'INTERRUPTED';
          closeWaits(bar, ev.at);
        }
        const type = str(d.type) ?? 'step';
        const next: Bar = { stepId, type, status: 'RUNNING', start: ev.at, tries: 1, waits: [] };
        if (iteration !== undefined) Object.assign(next, { loop, iteration });
        const attempt = int(d.attempt);
        if (attempt !== undefined && attempt > 1) next.attempt = attempt;
        if (sleepsType(type)) next.waits.push({ kind: 'delay', start: ev.at });
        if (isContainerType(type)) loop = stepId;
        bars.push(next);
        open.set(key, next);
        break;
      }
      case 'step.retrying':
        if (bar) {
          bar.retrying = true;
          bar.status = 'WAITING';
          bar.waits.push({ kind: 'retry', start: ev.at });
        }
        break;
      case 'step.succeeded':
      case 'step.failed': {
        if (!bar) break;
        bar.end = ev.at;
        bar.status = ev.type === 'step.succeeded' ? 'SUCCEEDED' : 'FAILED';
        closeWaits(bar, ev.at);
        const error = errorOf(d.error);
        if (error) bar.error = error;
        const items = int(d.items);
        if (items !== undefined) bar.items = items;
        const branch = d.branch as Bar['branch'] | undefined;
        if (branch && typeof branch === 'object') bar.branch = branch;
        open.delete(key);
        if (isContainerType(bar.type)) loop = undefined;
        break;
      }
      case 'approval.requested':
      case 'callback.requested':
        if (bar) {
          bar.waits.push({ kind: WAIT_OF[ev.type] as WaitKind, start: ev.at });
          bar.status = 'WAITING';
        }
        break;
      case 'approval.decided':
      case 'approval.expired':
      case 'callback.reported':
      case 'callback.expired': {
        // A vote of a quorum that is still short of its approvals does not end the wait.
        const short = int(d.approvals) !== undefined && (int(d.approvals) as number) < (int(d.minApprovals) ?? 1);
        if (bar && !short) {
          closeWaits(bar, ev.at);
          bar.status = 'RUNNING';
        }
        break;
      }
      case 'execution.succeeded':
      case 'execution.failed':
      case 'execution.cancelled':
        // The run's end ends what was still open (a cancelled wait, a step cut short).
        for (const b of open.values()) {
          b.end = ev.at;
          b.status = ev.type === 'execution.cancelled' ? 'CANCELLED' : b.status === 'RUNNING' ? 'FAILED' : b.status;
          closeWaits(b, ev.at);
        }
        open.clear();
        loop = undefined;
        break;
    }
  }
  return withSkipped(bars, steps);
}

/** Top-level steps skipped by their `when` (no events of their own), placed by the time they were passed. */
function withSkipped(bars: Bar[], steps: readonly StepState[]): Bar[] {
  const skipped = steps
    .filter((s) => s.status === 'SKIPPED' && s.startedAt !== undefined && !bars.some((b) => b.stepId === s.stepId))
    .map(
      (s): Bar => ({
        stepId: s.stepId,
        type: s.type,
        status: 'SKIPPED',
        start: s.startedAt as number,
        end: s.finishedAt,
        tries: 1,
        waits: [],
      }),
    );
  if (skipped.length === 0) return bars;
  // A stable merge by start: a bar keeps its place among bars that started at the same time.
  const merged = [...bars];
  for (const s of skipped) {
    const at = merged.findIndex((b) => b.start > s.start && b.loop === undefined);
    merged.splice(at < 0 ? merged.length : at, 0, s);
  }
  return merged;
}

const WAIT_TYPES: Record<string, WaitKind> = { manual_approval: 'approval', wait_for_callback: 'callback', delay: 'delay' };

function stateBar(s: StepState, loop?: { stepId: string; iteration: number }): Bar {
  const end = s.finishedAt;
  const wait = WAIT_TYPES[s.type];
  return {
    stepId: s.stepId,
    type: s.type,
    status: s.status,
    ...(loop ? { loop: loop.stepId, iteration: loop.iteration } : {}),
    start: s.startedAt as number,
    ...(end !== undefined ? { end } : {}),
    tries: s.tries ?? 1,
    ...(s.attempts && s.attempts > 1 ? { attempt: s.attempts } : {}),
    // A waiting step's whole time is its wait (the states do not record when the wait began).
    waits: wait && s.startedAt !== undefined ? [{ kind: wait, start: s.startedAt, ...(end !== undefined ? { end } : {}) }] : [],
    ...(s.error ? { error: s.error } : {}),
    ...(s.items !== undefined ? { items: s.items } : {}),
    ...(s.branch ? { branch: s.branch } : {}),
  };
}

/** The bars from the run's step states alone: each step's last execution, a loop's current (or last) iteration. */
export function fromSteps(steps: readonly StepState[]): Bar[] {
  const started = (s: { startedAt?: number }) => s.startedAt !== undefined;
  return steps
    .filter(started)
    .sort((a, b) => (a.startedAt as number) - (b.startedAt as number))
    .flatMap((s) => {
      const nested = (s.steps ?? []).filter(started);
      const iteration = Math.max(0, Math.min(s.iteration ?? 0, (s.items ?? 1) - 1));
      return [stateBar(s), ...nested.map((n) => stateBar(n, { stepId: s.stepId, iteration }))];
    });
}

/** The timeline of a run: from its log when it was read whole, else from its step states. */
export function timelineOf(events: readonly RunEvent[] | undefined, steps: readonly StepState[]): Timeline {
  return events ? { bars: fromEvents(events, steps), fromStates: false } : { bars: fromSteps(steps), fromStates: true };
}

/** How long a bar took (up to `now` while open). */
export const barMs = (b: Pick<Bar, 'start' | 'end'>, now: number) => Math.max(0, (b.end ?? now) - b.start);
/** How long it waited in all. */
export const waitedMs = (b: Pick<Bar, 'waits'>, now: number) => b.waits.reduce((n, w) => n + Math.max(0, (w.end ?? now) - w.start), 0);
