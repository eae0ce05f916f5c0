import type { Server } from 'node:http';
import type { Context } from 'aws-lambda';
import { resetConfig, config } from '../../shared/config.ts';
import { WORKER_TIMEOUT_SECONDS } from '../../shared/db/table.ts';
import { type AsyncFunctionSettings, invokeAsync } from './async-invoke.ts';
import { startEmulators } from './emulators.ts';
import { startPoller } from './poller.ts';
import { startLocalScheduler } from './scheduler.ts';
import { repairScheduleDrift } from '../../shared/domain/schedule-drift.ts';
import { startServer } from './server.ts';
import { startAuditStream } from './audit-stream.ts';
import { invoke, workerFunction } from './lambda.ts';
import { iamPlugin, keepInvocation } from './iam.ts';
import { conflictsPlugin } from './conflicts.ts';
import { configureFaults, type Faults, faultsPlugin, parseFaults } from './faults.ts';
import { addSdkPlugin, setIdentityKeeper } from '../../shared/sdk-plugins.ts';
import { seedDemo, type Demo } from './seed.ts';

export type LocalStackOptions = {
  host: string;
  port: number;
  /** Where DynamoDB Local and s3rver keep their data; omit for in-memory (tests). */
  dataDir?: string;
  /** Reuse emulators that are already running (tests); their environment must be set. */
  emulators?: 'start' | 'reuse';
  seed?: boolean;
  /** The demo admin's email (tests seed several demos into one database). */
  seedEmail?: string;
  /** Whether the seed starts the demo run that waits for approval (default: yes; tests that count runs say no). */
  demoRun?: boolean;
  /**
   * Seconds between runs of the scheduled sweep (`LOCAL_SWEEP_SECONDS`, default 60: EventBridge's one
   * minute on AWS). Tests of deadlines, reminders, escalation and callback timeouts set 1 or 2.
   */
  sweepSeconds?: number;
  /** The faults to inject (`FAULTS`, infra/local/faults.ts); omitted: those `FAULTS` in the environment names. */
  faults?: Faults;
  /** Runs-worker invocations at once (default `LOCAL_RUNS_CONCURRENCY`; the fairness bench uses the event source's on AWS, 50). */
  runsConcurrency?: number;
  /** Runs-worker invocations at once from the heavy lane's queue (shared/engine/lanes.ts); default `LOCAL_RUNS_CONCURRENCY` (the fairness bench: 10). */
  heavyRunsConcurrency?: number;
  /**
   * Whether the table's stream feeds the audit-events worker (infra/local/audit-stream.ts); default:
   * when the stack starts its own emulators (`npm start`), not on reused ones (tests: no stream there).
   */
  auditStream?: boolean;
};

/**
 * Runs-worker invocations at once locally, in each lane. On AWS each event source runs up to its maximum
 * concurrency (`runsWorkerConcurrency` and `heavyRunsWorkerConcurrency`, 50 each); here one process
 * shares two cores with DynamoDB Local, and a few receive loops keep a busy batch from holding the next one back.
 */
export const LOCAL_RUNS_CONCURRENCY = 4;
const SWEEP_FUNCTION: AsyncFunctionSettings = { ...workerFunction('sweep/scheduled', 60), config: 'sweep/scheduled' };

/**
 * The whole local stack: emulators, the HTTP server over the route table, the queue pollers feeding
 * the workers, the scheduled sweep on its timer (`sweepSeconds`), and the demo seed. Everything it started stops with `stop()`.
 */
export async function startLocalStack(opts: LocalStackOptions) {
  // Every function's AWS calls are checked against its grants, as IAM does on AWS (infra/local/iam.ts),
  // and concurrent writes to one item conflict as DynamoDB's transactions do (infra/local/conflicts.ts).
  addSdkPlugin(iamPlugin);
  addSdkPlugin(conflictsPlugin);
  setIdentityKeeper(keepInvocation);
  // And, on request, faults as AWS raises them (docs/local-mode.md): `FAULTS` is checked before anything starts.
  configureFaults('faults' in opts ? opts.faults : parseFaults(process.env.FAULTS));
  addSdkPlugin(faultsPlugin);
  const emulators = opts.emulators === 'reuse' ? undefined : await startEmulators({ dataDir: opts.dataDir, stream: true });
  if (emulators) Object.assign(process.env, emulators.env);
  resetConfig();
  // The functions check their settings when they are imported; one process holds them all, so the
  // environment is complete before any is: the emulators' names above, and the public URL once the
  // server listens. Requests (health too) wait until the sweep and the workers are in place and the demo is seeded.
  let started: { server: Server; url: string } | undefined;
  let poller: { stop: () => Promise<unknown> } | undefined;
  let stream: Awaited<ReturnType<typeof startAuditStream>> | undefined;
  let open: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => {
    open = resolve;
  });
  try {
    started = await startServer({ host: opts.host, port: opts.port, ready });
    process.env.PUBLIC_BASE_URL ??= started.url;
    poller = await startWorkers(Boolean(emulators), opts.sweepSeconds ?? 60, {
      main: opts.runsConcurrency ?? LOCAL_RUNS_CONCURRENCY,
      heavy: opts.heavyRunsConcurrency ?? LOCAL_RUNS_CONCURRENCY,
    });
    if (opts.auditStream ?? Boolean(emulators)) stream = await startAuditStream({ dataDir: opts.dataDir });
    const server = started.server;
    const demo: Demo | undefined =
      opts.seed && opts.dataDir ? await seedDemo(opts.dataDir, started.url, opts.seedEmail, opts.demoRun) : undefined;
    // Only now, seeded and `demo.json` written: a client that waits for /api/health may read it at once.
    open();
    return {
      url: started.url,
      /** Where the mail the stack sent can be read: the SES emulator's web viewer. */
      mailViewer: process.env.AWS_ENDPOINT_URL_SESV2,
      /** Where the audit entries went onto EventBridge: the local default bus (absent: none, or another endpoint). */
      eventBus: stream?.eventBus,
      demo,
      stop: async () => {
        server.closeAllConnections();
        await new Promise((r) => server.close(r));
        await poller?.stop();
        await stream?.stop();
        await emulators?.stop();
      },
    };
  } catch (e) {
    started?.server.close();
    await poller?.stop();
    await stream?.stop();
    await emulators?.stop();
    throw e;
  }
}

/** The startup sweep (on a restart), the queue pollers feeding the workers, and the scheduled sweep's timer. */
async function startWorkers(restart: boolean, sweepSeconds: number, runsConcurrency: { main: number; heavy: number }) {
  const { RUNS_QUEUE_URL, HEAVY_RUNS_QUEUE_URL, NOTIFY_QUEUE_URL } = config();
  // Starting the emulators is a restart: the startup sweep runs before any worker does. Local SQS
  // keeps no messages across restarts, so the other waiting runs get theirs again. (Reused emulators,
  // in tests, are no restart.)
  if (restart) {
    const startup = (await import('../../functions/sweep/startup.ts')).handler;
    // It is idempotent, so an invocation cut off (FAULTS) is run again, as a deploy that is retried runs it again.
    for (let attempt = 1; ; attempt++) {
      const outcome = await invoke(workerFunction('sweep/startup', 300), startup, { redispatch: true, rule: 'all' });
      if (outcome.status === 'ok') {
        // On AWS a failed sweep lets the deployment go on (it reports instead); a local start stops, as before.
        if (!outcome.result.ok) throw new Error(`the startup sweep failed: ${outcome.result.error}`);
        break;
      }
      if (attempt === 3) throw outcome.status === 'error' ? outcome.error : new Error('the startup sweep timed out');
    }
  }
  // Each worker within its function's timeout, as the CDK stack sets it (both: WORKER_TIMEOUT_SECONDS).
  // The runs worker from both lanes, each with its own concurrency, as its two event sources on AWS.
  const runsWorker = (await import('../../functions/worker/execute.ts')).handler;
  const runsFunction = workerFunction('worker/execute', WORKER_TIMEOUT_SECONDS);
  const workers = [
    startPoller(RUNS_QUEUE_URL, runsWorker, { fn: runsFunction, concurrency: runsConcurrency.main }),
    ...(HEAVY_RUNS_QUEUE_URL
      ? [startPoller(HEAVY_RUNS_QUEUE_URL, runsWorker, { fn: runsFunction, concurrency: runsConcurrency.heavy })]
      : []),
    startPoller(NOTIFY_QUEUE_URL, (await import('../../functions/worker/notify.ts')).handler, {
      fn: workerFunction('worker/notify', WORKER_TIMEOUT_SECONDS),
    }),
  ];
  // The scheduled sweep (EventBridge every minute on AWS): approval deadlines and crashed runs. One
  // sweep at a time: a slow one is not overlapped by the next tick (on AWS each tick is an invocation
  // of its own, and the sweep's writes are conditional, so overlap is safe there too).
  const { handler: sweep } = await import('../../functions/sweep/scheduled.ts');
  let sweeping = false;
  // Invoked asynchronously, as the EventBridge rule does: a failed tick is retried twice, then its record
  // goes to the on-failure queue (infra/local/async-invoke.ts). A tick or retry that finds a sweep under way leaves the work to it.
  const sweepOnce = async (event: unknown, context: Context) => {
    if (sweeping) return { skipped: 'a sweep is under way' };
    sweeping = true;
    try {
      return await sweep(event, context);
    } finally {
      sweeping = false;
    }
  };
  const sweepRetries = new AbortController();
  // The schedules: the in-process scheduler fires the timers the clock holds; the table's enabled
  // schedules become timers now (drift repair), from now on: fires missed while stopped are not replayed.
  const scheduler = await startLocalScheduler();
  await repairScheduleDrift();
  const sweepTimer = setInterval(() => {
    if (sweeping) return;
    const tick = { source: 'aws.events', 'detail-type': 'Scheduled Event', time: new Date().toISOString() };
    void invokeAsync(SWEEP_FUNCTION, sweepOnce, tick, { signal: sweepRetries.signal });
  }, sweepSeconds * 1000);
  sweepTimer.unref();
  return {
    stop: () => {
      clearInterval(sweepTimer);
      sweepRetries.abort();
      return Promise.all([scheduler.stop(), ...workers.map((w) => w.stop())]);
    },
  };
}
