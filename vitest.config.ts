import { defineConfig } from 'vitest/config';
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
    // What tests and the service print (request logs included: test/support/logs.ts) is shown for
    // failing tests only, unless TEST_LOGS=1.
    silent: testLogs() ? false : 'passed-only',
  },
});
