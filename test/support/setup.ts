import { afterAll, inject, vi } from 'vitest';
import { iamPlugin, keepInvocation } from '../../infra/local/iam.ts';
import { conflictsPlugin } from '../../infra/local/conflicts.ts';
import { configureFaults, faultsPlugin, parseFaults } from '../../infra/local/faults.ts';
import { resetClients } from '../../shared/clients.ts';
import { flushCounts } from '../../shared/db/counters.ts';
import { flushRefusals } from '../../shared/domain/inbound-record.ts';
import { localClock } from '../../shared/schedules/clock.ts';
import { addSdkPlugin, setIdentityKeeper } from '../../shared/sdk-plugins.ts';
import { checkFetchedResponses } from './contract.ts';
import { holdServerLogs } from './logs.ts';
import { applyTestEnv, setLogLevel } from './test-env.ts';

// The emulated project reuses a worker's modules from one test file to the next (vitest.config.ts,
// `isolate: false`): this file runs before each, and first puts back the environment the worker
// started with, whatever the file before changed (its own table, queues, FAULTS, settings).
const worker = globalThis as { flowgateStartEnv?: Record<string, string | undefined> };
worker.flowgateStartEnv ??= { ...process.env };
const started = worker.flowgateStartEnv;
for (const k of Object.keys(process.env)) if (!(k in started)) delete process.env[k];
Object.assign(process.env, started);
// New SDK clients: none of the last file's sockets, which a server may have closed, nor its drained retry quota.
resetClients();
// The local clock's timers stand for EventBridge Scheduler's schedules: the last file's stack's, not this one's.
localClock().timers.clear();
localClock().onChange = () => undefined;

// Every test file of the emulated project talks to the run's emulators through the production SDK
// clients, with the settings every function checks at import (./test-env.ts).
applyTestEnv(inject('emulatorEnv'));
// IAM as on AWS: a handler's AWS calls are checked against its function's grants (infra/local/iam.ts),
// here as in the local stack; a test's own setup calls are no function's and are not checked.
addSdkPlugin(iamPlugin);
// Concurrent writes to one item conflict as on DynamoDB (infra/local/conflicts.ts), which DynamoDB Local never does.
addSdkPlugin(conflictsPlugin);
setIdentityKeeper(keepInvocation);
// `FAULTS=… npm test`: the functions' work in every test under faults as AWS raises them (docs/local-mode.md).
configureFaults(parseFaults(process.env.FAULTS));
addSdkPlugin(faultsPlugin);
setLogLevel();
holdServerLogs();
// Every answer of a local server is checked against the OpenAPI document (test/support/contract.ts).
checkFetchedResponses();
// What a file left behind is not the next file's: its spies, its fake clock, its counts and refused requests
// not yet written (written now, to this file's table, rather than to the next file's; their last write at 0, so
// the next file's first is due at once, as in a fresh instance).
afterAll(async () => {
  vi.restoreAllMocks();
  vi.useRealTimers();
  await Promise.all([flushCounts(0), flushRefusals(0)]);
});
