import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The longest test files first (measured in a fresh-clone `.ci/run`), then vitest's own order: on a
 * fresh clone vitest has no durations and runs larger files first, which started the 2-minute chaos
 * soak last and left one worker running it alone at the end. Longest first keeps both workers busy.
 */
const LONGEST_FIRST = [
  'test/bench/chaos.test.ts',
  'test/integration/flow.test.ts',
  'test/e2e/fresh-clone.test.ts',
  'test/e2e/console-approvals.test.ts',
  'test/e2e/console-runs.test.ts',
  'test/bench/console-budgets.test.ts',
  'test/e2e/console-run.test.ts',
  'test/e2e/webhook-trigger.test.ts',
];

export default class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (f: TestSpecification) => {
      const i = LONGEST_FIRST.indexOf(relative(this.ctx.config.root, f.moduleId));
      return i === -1 ? LONGEST_FIRST.length : i;
    };
    return sorted
      .map((f, i) => ({ f, i }))
      .sort((a, b) => rank(a.f) - rank(b.f) || a.i - b.i)
      .map(({ f }) => f);
  }
}
