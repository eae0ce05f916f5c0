import { describe, expect, it } from 'vitest';
import type { Execution } from '../../shared/db/entities/execution.ts';
import { newEvent } from '../../shared/db/entities/run-events.ts';
import { CHECKPOINT_LIMITS } from '../../shared/engine/run-items.ts';
import { HeldRun } from '../../shared/engine/session.ts';

// What one write of a run's progress holds (docs/performance.md "Long runs"): the step loop writes a
// checkpoint once the progress is `full`, so no write passes DynamoDB's 100 items or 4 MB.

const run = () =>
  new HeldRun({ executionId: 'ex_1', accountId: 'acc_1', status: 'RUNNING', seq: 1, steps: [] } as unknown as Execution, undefined, 'me');
const step = (bytes = 0) => [
  newEvent('ex_1', 'step.started', { stepId: 's' }),
  newEvent('ex_1', 'step.succeeded', { stepId: 's', ...(bytes ? { note: 'x'.repeat(bytes) } : {}) }),
];
/** What a flush would write: the run's update, then its side records and event items. */
const groups = (r: HeldRun) => (r as unknown as { groups: unknown[][] }).groups;

describe('a checkpoint', () => {
  it('is due at 64 items (the run and 63 event items), well under the 100 a transaction takes', () => {
    const r = run();
    for (let i = 0; i < CHECKPOINT_LIMITS.items - 2; i++) r.record(step());
    expect(r.full).toBe(false);
    r.record(step());
    expect(r.full).toBe(true);
  });

  it('is due at 2 MB of events, whatever their number', () => {
    const r = run();
    let n = 0;
    while (!r.full) {
      r.record(step(200_000));
      n++;
    }
    expect(n).toBe(Math.ceil(CHECKPOINT_LIMITS.bytes / 200_000));
    expect(n).toBeLessThan(CHECKPOINT_LIMITS.items);
  });

  it("a loop's steps share event items of at most 200 events and 100 KB", () => {
    const r = run();
    for (let i = 0; i < 1_000; i++) r.record(step(), [], true);
    expect(groups(r).map((g) => g.length)).toEqual(Array(10).fill(200));
    const big = run();
    for (let i = 0; i < 100; i++) big.record(step(5_000), [], true);
    for (const g of groups(big)) expect(Buffer.byteLength(JSON.stringify(g))).toBeLessThanOrEqual(100_000);
    expect(groups(big).length).toBeGreaterThan(1);
  });

  it('numbers every event on from the run, in the order recorded', () => {
    const r = run();
    for (let i = 0; i < 70; i++) r.record(step(), [], i % 2 === 0);
    expect(
      groups(r)
        .flat()
        .map((e) => (e as { seq: number }).seq),
    ).toEqual(Array.from({ length: 140 }, (_, i) => i + 2));
  });
});
