import { describe, expect, it } from 'vitest';
import { allowedActions } from '../../functions/http/console/runs/action-rules.ts';
import type { StepState } from '../../shared/db/entities/execution-state.ts';
import type { Execution } from '../../shared/db/entities/execution.ts';
import type { RunEvent } from '../../shared/db/entities/run-events.ts';
import { takenPath } from '../../shared/console/run-path.ts';
import { fromEvents, fromSteps, timelineOf } from '../../shared/console/run-timeline.ts';
import { GAP_PX, timeScale } from '../../shared/console/timeline-scale.ts';

/** The run page's timeline as data (shared/console/run-timeline.ts), its time axis, the path it gives, and the actions it offers. */

let seq = 0;
const ev = (type: string, at: number, data: Record<string, unknown> = {}): RunEvent => ({
  eventId: `ev_${++seq}`,
  type,
  at,
  executionId: 'ex_1',
  seq,
  data,
});

// A run: set, a switch, a for_each of two items, a request retried twice, an approval of 1 h, then the end.
const log = [
  ev('execution.started', 0, { input: {} }),
  ev('step.started', 10, { stepId: 'prepare', type: 'set' }),
  ev('step.succeeded', 12, { stepId: 'prepare' }),
  ev('step.started', 12, { stepId: 'route', type: 'switch' }),
  ev('step.succeeded', 13, { stepId: 'route', branch: { case: 'default', next: 'each' } }),
  ev('step.started', 13, { stepId: 'each', type: 'for_each' }),
  ev('step.started', 14, { stepId: 'ping', type: 'set', iteration: 0 }),
  ev('step.succeeded', 15, { stepId: 'ping', iteration: 0 }),
  ev('step.started', 15, { stepId: 'ping', type: 'set', iteration: 1 }),
  ev('step.succeeded', 16, { stepId: 'ping', iteration: 1 }),
  ev('step.succeeded', 16, { stepId: 'each', items: 2 }),
  ev('step.started', 20, { stepId: 'call', type: 'http_request' }),
  ev('step.retrying', 60, { stepId: 'call', attempt: 1, delaySeconds: 1 }),
  ev('step.started', 1060, { stepId: 'call', type: 'http_request', attempt: 2 }),
  ev('step.retrying', 1100, { stepId: 'call', attempt: 2, delaySeconds: 2 }),
  ev('step.started', 3100, { stepId: 'call', type: 'http_request', attempt: 3 }),
  ev('step.succeeded', 3150, { stepId: 'call' }),
  ev('step.started', 3200, { stepId: 'approve', type: 'manual_approval' }),
  ev('approval.requested', 3200, { stepId: 'approve', approvalId: 'ap_1' }),
  ev('approval.decided', 3_603_200, { stepId: 'approve', approvals: 1, minApprovals: 2 }),
  ev('approval.decided', 3_603_300, { stepId: 'approve', approvals: 2, minApprovals: 2 }),
  ev('step.succeeded', 3_603_400, { stepId: 'approve' }),
  ev('execution.succeeded', 3_603_410, { output: null }),
];
const steps: StepState[] = [
  { stepId: 'prepare', type: 'set', status: 'SUCCEEDED', startedAt: 10, finishedAt: 12 },
  { stepId: 'route', type: 'switch', status: 'SUCCEEDED', startedAt: 12, finishedAt: 13 },
  { stepId: 'guard', type: 'fail', status: 'PENDING' },
  { stepId: 'maybe', type: 'set', status: 'SKIPPED', startedAt: 18, finishedAt: 18 },
  { stepId: 'each', type: 'for_each', status: 'SUCCEEDED', startedAt: 13, finishedAt: 16, items: 2, iteration: 2 },
  { stepId: 'call', type: 'http_request', status: 'SUCCEEDED', startedAt: 3100, finishedAt: 3150, tries: 3 },
  { stepId: 'approve', type: 'manual_approval', status: 'SUCCEEDED', startedAt: 3200, finishedAt: 3_603_400 },
];

describe('the timeline from the log', () => {
  const bars = fromEvents(log, steps);

  it('has a bar per step execution, a loop body once per iteration, skipped steps in their place, never steps not reached', () => {
    expect(bars.map((b) => `${b.stepId}${b.iteration !== undefined ? `#${b.iteration}` : ''}`)).toEqual([
      'prepare',
      'route',
      'each',
      'ping#0',
      'ping#1',
      'maybe',
      'call',
      'approve',
    ]);
    expect(bars.find((b) => b.stepId === 'maybe')).toMatchObject({ status: 'SKIPPED' });
    expect(bars.filter((b) => b.stepId === 'ping').map((b) => b.loop)).toEqual(['each', 'each']);
    expect(bars.find((b) => b.stepId === 'each')).toMatchObject({ items: 2, start: 13, end: 16 });
    expect(bars.find((b) => b.stepId === 'route')?.branch).toEqual({ case: 'default', next: 'each' });
  });

  it("keeps a retried step's attempts on one bar with its backoffs as waits, and an approval's wait until the quorum is met", () => {
    expect(bars.find((b) => b.stepId === 'call')).toMatchObject({
      tries: 3,
      start: 20,
      end: 3150,
      status: 'SUCCEEDED',
      waits: [
        { kind: 'retry', start: 60, end: 1060 },
        { kind: 'retry', start: 1100, end: 3100 },
      ],
    });
    expect(bars.find((b) => b.stepId === 'approve')?.waits).toEqual([{ kind: 'approval', start: 3200, end: 3_603_300 }]);
  });

  it('leaves a waiting step open, and a step re-entered after an interruption is a new bar', () => {
    const waiting = fromEvents(log.slice(0, 19), steps);
    expect(waiting.at(-1)).toMatchObject({ stepId: 'approve', status: 'WAITING' });
    expect(waiting.at(-1)?.end).toBeUndefined();
    expect(waiting.at(-1)?.waits[0]?.end).toBeUndefined();
    const again = fromEvents(
      [
        ev('step.started', 0, { stepId: 'call', type: 'http_request' }),
        ev('execution.interrupted', 5, { stepId: 'call' }),
        ev('execution.resumed', 50, { stepId: 'call' }),
        ev('step.started', 51, { stepId: 'call', type: 'http_request' }),
        ev('step.succeeded', 60, { stepId: 'call' }),
      ],
      [],
    );
    expect(again.map((b) => [b.status, b.start, b.end])).toEqual([
      ['INTERRUPTED', 0, 51],
      ['SUCCEEDED', 51, 60],
    ]);
  });

  it('falls back to the step states when the log was not read whole', () => {
    const t = timelineOf(undefined, steps);
    expect(t.fromStates).toBe(true);
    expect(t.bars.map((b) => b.stepId)).toEqual(['prepare', 'route', 'each', 'maybe', 'call', 'approve']);
    expect(fromSteps(steps).find((b) => b.stepId === 'approve')?.waits).toEqual([{ kind: 'approval', start: 3200, end: 3_603_400 }]);
  });
});

describe('the time axis', () => {
  it('draws waits of a second or more at a fixed width and the rest linearly, in order', () => {
    const bars = fromEvents(log, steps);
    const scale = timeScale(bars, 0, 3_603_410, 700, 3_603_410);
    const gaps = scale.segments.filter((s) => s.compressed);
    // The two backoffs (1 s, 2 s) and the hour of the approval (with the idle 50 ms before it).
    expect(gaps.map((g) => g.to - g.from)).toEqual([1000, 2000, 3_600_150]);
    for (const g of gaps) expect(g.width).toBe(GAP_PX);
    expect(scale.x(3_603_410)).toBeCloseTo(700);
    const xs = [0, 10, 20, 60, 1060, 3100, 3200, 3_603_300, 3_603_410].map(scale.x);
    expect([...xs].sort((a, b) => a - b)).toEqual(xs);
    // The hour-long wait takes no more room than the 1 s backoff.
    expect(scale.x(3_603_300) - scale.x(3200)).toBeCloseTo(scale.x(1060) - scale.x(60));
  });
});

describe('the taken path', () => {
  it('lists the steps visited and the edges taken, a loop to each iteration\u2019s first nested step', () => {
    expect(takenPath(steps, log)).toEqual({
      steps: ['prepare', 'route', 'each', 'ping', 'maybe', 'call', 'approve'],
      edges: [
        { from: 'prepare', to: 'route' },
        { from: 'route', to: 'each' },
        { from: 'each', to: 'ping' },
        { from: 'each', to: 'maybe' },
        { from: 'maybe', to: 'call' },
        { from: 'call', to: 'approve' },
      ],
    });
    // From the step states alone: each step once, in the order they started.
    expect(takenPath(steps).steps).toEqual(['prepare', 'route', 'each', 'maybe', 'call', 'approve']);
  });
});

describe("a run's actions on its page", () => {
  const run = (status: Execution['status'], more: Partial<Execution> = {}): Execution => ({
    executionId: 'ex_1',
    accountId: 'acc_1',
    workflowId: 'wf_1',
    trigger: 'api',
    status,
    workflowVersion: 1,
    recovery: false,
    variables: {},
    outputs: {},
    steps: [{ stepId: 'a', type: 'http_request', status: status === 'FAILED' ? 'FAILED' : 'SUCCEEDED', startedAt: 1 }],
    nextStep: 0,
    startedAt: Date.now(),
    updatedAt: Date.now(),
    ...more,
  });

  it('offers what the API allows for the status, as the engine refuses the rest', () => {
    expect(allowedActions(run('WAITING_APPROVAL'))).toEqual(['cancel']);
    expect(allowedActions(run('RUNNING'))).toEqual(['cancel']);
    expect(allowedActions(run('INTERRUPTED'))).toEqual(['cancel', 'rerun', 'resume']);
    expect(allowedActions(run('FAILED', { finishedAt: Date.now(), error: { code: 'HTTP_STATUS', message: 'no' } }))).toEqual([
      'retry',
      'rerun',
    ]);
    // A rejection is a person's decision: rerun to ask again, no retry.
    expect(allowedActions(run('FAILED', { finishedAt: Date.now(), error: { code: 'APPROVAL_REJECTED', message: 'no' } }))).toEqual([
      'rerun',
    ]);
    expect(allowedActions(run('SUCCEEDED', { finishedAt: Date.now() }))).toEqual(['rerun']);
    expect(allowedActions(run('CANCELLED', { finishedAt: Date.now() }))).toEqual(['rerun']);
  });
});
