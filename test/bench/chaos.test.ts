import { ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { parseFaults } from '../../infra/local/faults.ts';
import { queue } from '../../shared/clients.ts';
import { resetConfig } from '../../shared/config.ts';
import { useOwnTable } from '../support/engine.ts';
import { localStackOnSharedEmulators } from '../support/local-stack.ts';
import { CHAOS_FAULTS, chaosSoak } from './chaos.ts';

/**
 * The chaos soak's short version (`npm run bench -- chaos` is the long one, docs/performance.md):
 * runs of mixed work through the public API of a local stack under every FAULTS kind at 5 %, then
 * every invariant checked. Its own stack, table (its sweeps read the whole table), queues and log.
 */

const RUNS = Number(process.env.CHAOS_RUNS ?? 100);
let stack: Awaited<ReturnType<typeof localStackOnSharedEmulators>>['stack'];
let logs = '';
const write = process.stderr.write.bind(process.stderr);
const consoleError = console.error;

beforeAll(async () => {
  Object.assign(process.env, {
    FAULTS: CHAOS_FAULTS,
    HTTP_STEP_ALLOWLIST: '127.0.0.1/32',
    LOCAL_ASYNC_RETRY_SECONDS: '1',
    // A lost run message is sent again 10 s after it was due, not 2 minutes: the soak settles sooner (and sends more copies).
    DISPATCH_GRACE_SECONDS: '10',
    RATE_LIMITS: JSON.stringify({ free: 1_000_000, pro: 1_000_000, team: 1_000_000, enterprise: 1_000_000 }),
  });
  resetConfig();
  await useOwnTable();
  // What the stack logs, for the DLQ check (every line still goes where it went).
  process.stderr.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    logs += String(chunk);
    return (write as (...a: unknown[]) => boolean)(chunk, ...rest);
  }) as typeof process.stderr.write;
  // And the local runtime's own lines (a crash, a timeout, an asynchronous event dropped: infra/local/), which go
  // to the console: a dropped event of the sweep is explained by its request id there and nowhere else.
  console.error = (...args: unknown[]) => {
    logs += `${args.map(String).join(' ')}\n`;
    consoleError(...args);
  };
  ({ stack } = await localStackOnSharedEmulators('chaos', { seed: true, sweepSeconds: 5, demoRun: false }));
});
afterAll(async () => {
  await stack?.stop();
  process.stderr.write = write;
  console.error = consoleError;
  delete process.env.FAULTS;
});

it(`${RUNS} runs of mixed work under every fault kind at 5 %: every invariant holds`, { timeout: 600_000 }, async () => {
  expect(parseFaults(process.env.FAULTS)).toHaveProperty('lambda.crash', 0.05);
  const result = await chaosSoak(
    {
      url: stack.url,
      demo: stack.demo!,
      logs: () => logs,
      deadLetters: async () => {
        const { Messages = [] } = await queue().send(
          new ReceiveMessageCommand({ QueueUrl: process.env.ASYNC_FAILURES_QUEUE_URL, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }),
        );
        return { 'async-failures': Messages.map((m) => m.Body ?? '') };
      },
    },
    { runs: RUNS, settleSeconds: 180, progress: (l) => console.log(l) },
  );
  console.log(JSON.stringify(result.faults), JSON.stringify(result.answers.byStatus));
  console.table(result.rows);
  // Every kind was injected at least once: the soak is no soak otherwise.
  for (const kind of Object.keys(parseFaults(process.env.FAULTS) ?? {})) expect(result.faults[kind], kind).toBeGreaterThan(0);
  expect(result.rows.filter((r) => !r.held)).toEqual([]);
});
