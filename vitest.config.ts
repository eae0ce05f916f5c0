import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { defineConfig } from 'vitest/config';
import LongestFirst from './test/support/sequencer.ts';
import { testLogs } from './test/support/test-logs.ts';

/**
 * Unit tests: they need no DynamoDB, SQS, S3 or server (pure functions, the source tree, rendered
 * pages, models), so their project starts no emulator (test/support/unit-setup.ts points the services
 * at an address where nothing listens). `npm run test:unit` runs them alone, in seconds; `npm test`
 * runs both projects, each file once. A file here that needs an emulator fails at once: move it to
 * the emulated project by listing it in NOT_UNIT.
 */
/** Files under test/unit/ that run with the emulated project: they start Node processes (a cold start each). */
const NOT_UNIT = ['test/unit/cold-start-config.test.ts', 'test/unit/cursor-key.test.ts'];
const UNIT = [
  ...readdirSync(join(import.meta.dirname, 'test/unit'))
    .filter((f) => f.endsWith('.test.ts'))
    .map((f) => `test/unit/${f}`)
    .filter((f) => !NOT_UNIT.includes(f)),
  'test/bench/cost-model.test.ts',
  'test/bench/heat-model.test.ts',
  'test/bench/peer.test.ts',
];

/**
 * Emulated files that need a module graph of their own: they mock a module (`vi.mock`, `vi.doMock`), or set
 * what a client reads when its module loads (an endpoint) before importing it. Every other emulated file
 * shares its worker's modules with the files before it (`isolate: false`: the app is loaded once a worker,
 * not once a file); test/support/setup.ts puts back before each file what the one before changed.
 */
const OWN_MODULES = [
  'test/integration/member-emails.test.ts',
  'test/integration/audit-events.test.ts',
  'test/integration/audit-stream.test.ts',
  'test/infra/placement.test.ts',
];
/** Both emulated projects: the run's one set of emulators (test/support/global-setup.ts) and the same setup. */
const emulated = { globalSetup: ['test/support/global-setup.ts'], setupFiles: ['test/support/setup.ts'] };

export default defineConfig({
  test: {
    pool: 'forks',
    // A test's time is never asserted (benches measure): the limit only ends one that hangs, and three busy workers on
    // two cores stretch a test's time by a quarter.
    testTimeout: 60_000,
    hookTimeout: 90_000,
    // Three workers on two cores: the emulators' share and the chaos soak's long waits leave room for a third (a
    // fresh-clone .ci/run: 926 s against 1,065 s with two, the same commit and machine, one sitting). The run-costs
    // measurement keeps the triggers' counts out of its batches however slow the machine (test/bench/scenarios.ts).
    maxWorkers: 3,
    // The longest files first (test/support/sequencer.ts): no worker is left with a long one at the end.
    sequence: { sequencer: LongestFirst },
    // What tests and the service print (request logs included: test/support/logs.ts) is shown for
    // failing tests only, unless TEST_LOGS=1.
    silent: testLogs() ? false : 'passed-only',
    projects: [
      {
        extends: true,
        // One module graph per worker for the unit files (no fresh fork per file): they hold no state between
        // files, and their imports were most of their time (57 s → 24 s on two cores).
        test: { name: 'unit', include: UNIT, setupFiles: ['test/support/unit-setup.ts'], isolate: false },
      },
      {
        extends: true,
        test: { name: 'emulated', include: ['test/**/*.test.ts'], exclude: [...UNIT, ...OWN_MODULES], isolate: false, ...emulated },
      },
      { extends: true, test: { name: 'emulated-own-modules', include: OWN_MODULES, ...emulated } },
    ],
  },
});
