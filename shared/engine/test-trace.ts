import type { RunError } from '../db/entities/execution-state.ts';
import type { RunEvent } from '../db/entities/run-events.ts';

/**
 * The trace of a test run (./test-run.ts), read off the events its steps record: one entry per step
 * execution (a retry's attempts are one entry; each iteration of a loop's steps one), in the order
 * executed. `input` is what the step would have sent or asked (an http_request's request, an
 * approval's title, reviewers and form), null for the others; `output` is `$steps.<id>.output`.
 */
export type TestStep = {
  id: string;
  iteration?: number;
  status: 'RUNNING' | 'RETRYING' | 'WAITING' | 'SUCCEEDED' | 'FAILED';
  input: unknown;
  output: unknown;
  error: RunError | null;
  /** Attempts made, for a step whose retry policy made more than one. */
  attempts?: number;
};

type Data = {
  stepId?: unknown;
  iteration?: unknown;
  error?: RunError;
  attempt?: unknown;
  title?: unknown;
  reviewers?: unknown;
  form?: unknown;
};

export class TestTrace {
  readonly steps: TestStep[] = [];
  readonly path: string[] = [];

  /** The last entry of `id` (in `iteration`, when given). */
  last(id: string, iteration?: number): TestStep | undefined {
    for (let i = this.steps.length - 1; i >= 0; i--) {
      const s = this.steps[i] as TestStep;
      if (s.id === id && (iteration === undefined || s.iteration === iteration)) return s;
    }
    return undefined;
  }

  /** A step execution begins (or, after a `step.retrying`, its next attempt). */
  begin(id: string, iteration: number | undefined, input: unknown): TestStep {
    const open = this.last(id, iteration);
    if (open?.status === 'RETRYING') {
      open.status = 'RUNNING';
      if (input !== null) open.input = input;
      return open;
    }
    const entry: TestStep = { id, ...(iteration === undefined ? {} : { iteration }), status: 'RUNNING', input, output: null, error: null };
    this.steps.push(entry);
    this.path.push(id);
    return entry;
  }

  /**
   * One recorded event. `inputOf`: what the step sent (taken once, at its `step.started`); `outputOf`:
   * the step's output on the run as the event is recorded (the step loop updates the run first).
   */
  see(ev: RunEvent, inputOf: (id: string) => unknown, outputOf: (id: string) => unknown) {
    const d = ev.data as Data;
    if (typeof d.stepId !== 'string') return;
    const id = d.stepId;
    const iteration = typeof d.iteration === 'number' ? d.iteration : undefined;
    const entry = () => this.last(id, iteration) ?? this.begin(id, iteration, null);
    switch (ev.type) {
      case 'step.started':
        this.begin(id, iteration, inputOf(id));
        return;
      case 'step.retrying': {
        const e = entry();
        e.status = 'RETRYING';
        e.attempts = Number(d.attempt) + 1;
        return;
      }
      case 'approval.requested':
        Object.assign(entry(), { status: 'WAITING', input: { title: d.title, reviewers: d.reviewers, form: d.form ?? null } });
        return;
      case 'callback.requested':
        entry().status = 'WAITING';
        return;
      case 'step.succeeded':
        Object.assign(entry(), { status: 'SUCCEEDED', output: outputOf(id) ?? null, error: null });
        return;
      case 'step.failed':
        Object.assign(entry(), { status: 'FAILED', output: outputOf(id) ?? null, error: d.error ?? null });
        return;
      default:
    }
  }

  /** The test run stopped at step `id` (a missing mock): its entry fails with `error`. */
  stopAt(id: string, iteration: number | undefined, input: unknown, error: RunError) {
    const open = this.last(id, iteration);
    const e = open && open.status !== 'SUCCEEDED' && open.status !== 'FAILED' ? open : this.begin(id, iteration, input);
    Object.assign(e, { status: 'FAILED', error });
  }
}
