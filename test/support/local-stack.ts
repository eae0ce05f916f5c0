import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLocalStack } from '../../infra/local/stack.ts';
import { useOwnQueues } from './engine.ts';
import { uniqueEmail } from './fixtures.ts';

/**
 * The local stack in this test process on the run's shared emulators, with queues of its own and a
 * fresh data folder (`flowgate-<name>-…`); `seed` seeds the demo under an admin email of its own;
 * `sweepSeconds` runs the scheduled sweep that often (deadlines, reminders, timeouts in seconds).
 */
export async function localStackOnSharedEmulators(name: string, opts: { seed?: boolean; sweepSeconds?: number; demoRun?: boolean } = {}) {
  await useOwnQueues();
  const dataDir = mkdtempSync(join(tmpdir(), `flowgate-${name}-`));
  const stack = await startLocalStack({
    host: '127.0.0.1',
    port: 0,
    dataDir,
    emulators: 'reuse',
    seed: opts.seed ?? false,
    ...(opts.sweepSeconds ? { sweepSeconds: opts.sweepSeconds } : {}),
    ...(opts.seed ? { seedEmail: uniqueEmail(name) } : {}),
    ...(opts.demoRun === false ? { demoRun: false } : {}),
  });
  return { stack, dataDir };
}
