import { setImmediate as nextTurn } from 'node:timers/promises';

/**
 * How a run's in-memory steps share the process (docs/performance.md "Long runs"). Steps without I/O
 * (`set`, `switch`, a loop's iterations) run back to back with no await between them, so a long run
 * would hold the event loop: the other runs of its worker batch, and locally every route, would wait
 * for it. The step loop yields to the event loop every `stepsPerYield` steps or `msPerYield` of work,
 * whichever comes first, and one invocation executes at most `stepsPerInvocation` steps of a run
 * before it hands the run to a fresh message (as it does when its time runs short), so no run keeps
 * its batch's invocation for long.
 */
export const PACE = { stepsPerYield: 50, msPerYield: 10, stepsPerInvocation: 2_000 };

/** Yields to the event loop so far, in this process (tests count them). */
export const paced = { yields: 0 };

/** One invocation's pace for one run; `share` is what it may spend on the run (steps, and ms of its time). */
export class Pace {
  private steps = 0;
  private sinceYield = 0;
  private readonly began = performance.now();
  private lastYield = this.began;

  constructor(private readonly share: { steps: number; ms?: number } = { steps: PACE.stepsPerInvocation }) {}

  /** This invocation executed its share of the run's steps: the run goes to a fresh message. */
  get spent() {
    const { steps, ms } = this.share;
    return this.steps >= steps || (ms !== undefined && performance.now() - this.began >= ms);
  }

  /** One step executed; every `stepsPerYield` steps (or `msPerYield`), a turn of the event loop for the rest of the process. */
  async stepped(): Promise<void> {
    this.steps++;
    this.sinceYield++;
    if (this.sinceYield < PACE.stepsPerYield && performance.now() - this.lastYield < PACE.msPerYield) return;
    await nextTurn();
    paced.yields++;
    this.sinceYield = 0;
    this.lastYield = performance.now();
  }
}
