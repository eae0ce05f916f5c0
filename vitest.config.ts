import { defineConfig } from 'vitest/config';
import LongestFirst from './test/support/sequencer.ts';
import { testLogs } from './test/support/test-logs.ts';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    setupFiles: ['test/support/setup.ts'],
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 90_000,
    // Two cores: the emulators need one.
    maxWorkers: 2,
    // The longest files first (test/support/sequencer.ts): no worker is left with a long one at the end.
    sequence: { sequencer: LongestFirst },
    // What tests and the service print (request logs included: test/support/logs.ts) is shown for
    // failing tests only, unless TEST_LOGS=1.
    silent: testLogs() ? false : 'passed-only',
  },
});
