// `npm run bench`: every benchmark of docs/performance.md, printed as tables and written to bench-results/bench.json.
// `npm run bench -- <part> ... [--flags]` runs parts; the flags are the `load` part's, `--cost-rate-limit`
// the `cost` part's and `--runs-concurrency` / `--heavy-runs-concurrency` the `fairness` part's (docs/performance.md).
import { mkdirSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { startEmulators } from '../../infra/local/emulators.ts';
import { resetConfig } from '../../shared/config.ts';
import { bundle, emptyHandler, FUNCTIONS, KIB, sdkFloor } from './bundles.ts';
import { importInstructions, importTimes } from './cold-start.ts';
import { measureCpu } from './cpu.ts';
import { measureLoad } from './load.ts';

// The environment the stack under test (`load`) is started with: before the in-process parts add the emulators' to it.
const launchEnv = { ...process.env };
process.env.POWERTOOLS_LOG_LEVEL ??= 'SILENT';
process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';
const { values: flags, positionals: only } = parseArgs({
  allowPositionals: true,
  options: {
    seconds: { type: 'string', default: '10' },
    connections: { type: 'string', default: '1,10,50' },
    rounds: { type: 'string', default: '3' },
    'warmup-seconds': { type: 'string', default: '20' },
    'warmup-runs': { type: 'string' },
    against: { type: 'string' },
    peer: { type: 'string' },
    'peer-target': { type: 'string', default: 'bench-auth' },
    workload: { type: 'string', default: 'set' },
    'cost-rate-limit': { type: 'string' },
    runs: { type: 'string', default: '2000' },
    'runs-concurrency': { type: 'string' },
    'heavy-runs-concurrency': { type: 'string' },
  },
});
const PARTS = [
  'load',
  'round-trips',
  'trigger-times',
  'run-costs',
  'worker',
  'load-inprocess',
  'heat',
  'cost',
  'bundles',
  'cold-start',
  'console-cold-start',
  'cpu',
  'fairness',
  'burst',
  'chaos',
];
const unknown = only.filter((p) => !PARTS.includes(p));
if (unknown.length) throw new Error(`unknown part ${unknown.join(', ')}; parts: ${PARTS.join(', ')}`);
// `chaos` (minutes of faults) runs only when named.
const wanted = (part: string) => (only.length === 0 && part !== 'chaos') || only.includes(part);
const workload = (v: unknown): 'set' | 'realistic' => {
  if (v === 'set' || v === 'realistic') return v;
  throw new Error(`--workload must be set or realistic (got ${v})`);
};
const positive = (name: string, v: string | undefined) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be a whole number ≥ 1 (got ${v})`);
  return n;
};
const results: Record<string, unknown> = {
  machine: { cpus: (await import('node:os')).cpus().length, node: process.version },
  at: new Date().toISOString(),
};

if (wanted('load')) {
  results.load = await measureLoad(
    {
      seconds: positive('seconds', flags.seconds),
      connections: (flags.connections as string).split(',').map((c) => positive('connections', c)),
      rounds: positive('rounds', flags.rounds),
      warmupSeconds: positive('warmup-seconds', flags['warmup-seconds']),
      ...(flags['warmup-runs'] ? { warmupRuns: positive('warmup-runs', flags['warmup-runs']) } : {}),
      ...(flags.against ? { against: flags.against } : {}),
      ...(flags.peer ? { peer: flags.peer } : {}),
      peerTarget: flags['peer-target'] as string,
      workload: workload(flags.workload),
    },
    launchEnv,
  );
}

const IN_PROCESS = ['round-trips', 'trigger-times', 'run-costs', 'worker', 'load-inprocess', 'heat', 'cost', 'fairness', 'burst'];
const emulators = IN_PROCESS.some(wanted) ? await startEmulators() : undefined;
if (emulators) {
  try {
    // The handlers check their settings when imported, so they are imported once these are set.
    Object.assign(process.env, emulators.env);
    process.env.PUBLIC_BASE_URL ??= 'http://flowgate.bench';
    resetConfig();
    const { useOwnQueues } = await import('../support/engine.ts');
    const { instrumentClients } = await import('./counting.ts');
    const { measureLoadInProcess } = await import('./load-inprocess.ts');
    const { givenBenchData, measureRoundTrips, measureRunCosts, measureTriggerTimes, measureWorker } = await import('./scenarios.ts');
    await instrumentClients();
    await useOwnQueues();
    const data = await givenBenchData();
    if (wanted('heat')) {
      // A table of its own (the sweeps read every item of their kind), then the previous one again.
      const { instrumentHeat } = await import('./heat-record.ts');
      const { heatPart } = await import('./heat.ts');
      instrumentHeat();
      results.heat = await heatPart();
    }
    if (wanted('cost')) {
      const { instrumentHeat } = await import('./heat-record.ts');
      const { costPart } = await import('./cost-report.ts');
      instrumentHeat();
      results.cost = await costPart(
        data,
        flags['cost-rate-limit'] ? { rateLimit: positive('cost-rate-limit', flags['cost-rate-limit']) } : {},
      );
    }
    if (wanted('round-trips')) {
      const rows = await measureRoundTrips(data);
      console.log('\nRound trips per request (budget, trigger: cold ≤ 4 calls / ≤ 3 steps, warm ≤ 2)');
      console.table(rows.map(({ raw, ...r }) => r));
      results.roundTrips = rows.map(({ raw, ...r }) => r);
    }
    if (wanted('trigger-times')) {
      const rows = await measureTriggerTimes(data);
      console.log("\nWhere a warm trigger's time goes on the emulators, in-process, 200 one at a time (ms)");
      console.table(rows);
      results.triggerTimes = rows;
    }
    if (wanted('run-costs')) {
      const rows = await measureRunCosts(data);
      console.log(
        '\nDynamoDB per webhook run, warm (targets: 1 step ≤ 6 calls and ≤ 16 write units; a further set step ≤ 1 call, ≤ 1.5 units; a batch of 10: per run)',
      );
      console.table(rows);
      results.runCosts = rows;
    }
    if (wanted('worker')) {
      const worker = await measureWorker(data);
      console.log('\nWorker, 20-step set workflow (budget: 1 DynamoDB write per step)');
      console.table([worker]);
      results.worker = worker;
    }
    if (wanted('load-inprocess')) {
      const { rows, dispatch } = await measureLoadInProcess(data, { seconds: 10 });
      console.log(
        '\nThroughput and latency of the local stack in the bench process, autocannon, 10 s per row (approvals: one POST per pending approval)',
      );
      console.table(rows);
      console.log("\nDispatch latency, local stack: trigger 200 → worker claim (run's step.started), ms");
      console.table(dispatch);
      results.loadInProcess = rows;
      results.dispatch = dispatch;
    }
    if (wanted('burst')) {
      // It starts the local stack in this process (its SDK plugins stay): after the parts that count calls.
      const { burstPart } = await import('./burst.ts');
      results.burst = await burstPart();
    }
    if (wanted('fairness')) {
      // Last of these: it starts the local stack in this process (its SDK plugins stay).
      const { fairnessPart } = await import('./fairness.ts');
      results.fairness = await fairnessPart(
        flags['runs-concurrency'] ? positive('runs-concurrency', flags['runs-concurrency']) : undefined,
        flags['heavy-runs-concurrency'] ? positive('heavy-runs-concurrency', flags['heavy-runs-concurrency']) : undefined,
      );
    }
  } finally {
    await emulators.stop();
  }
}

if (wanted('bundles')) {
  const sizes = [await sdkFloor()];
  for (const f of FUNCTIONS) sizes.push(await bundle(f));
  const rows = sizes.map((b) => ({ function: b.handler, KiB: Math.round(b.bytes / KIB) }));
  console.log('\nBundle sizes, CDK bundling settings, SDK inside (budgets: trigger ≤ 600 KiB, health ≤ 200 KiB)');
  console.table(rows);
  results.bundles = rows;
}
if (wanted('cold-start')) {
  const [empty, trigger] = [await emptyHandler(), await bundle('http/webhooks/trigger')];
  const row = (b: { handler: string; file: string }) => ({
    bundle: b.handler,
    ...importTimes(b.file, 20),
    instructions: importInstructions(b.file),
  });
  const rows = [row(empty), row(trigger)];
  const overEmpty = (rows[1]?.instructions ?? 0) - (rows[0]?.instructions ?? 0);
  console.log(
    '\nCold start: import of the bundle in a fresh process, ms over 20 runs, instructions by callgrind (budget: ≤ 400 M over empty)',
  );
  console.table(rows);
  console.log(`trigger import over the empty handler: ${(overEmpty / 1e6).toFixed(0)} M instructions`);
  results.coldStart = { rows, instructionsOverEmpty: overEmpty };
}
if (wanted('console-cold-start')) {
  const { consoleColdStart, pageModules } = await import('./console-cold-start.ts');
  const r = await consoleColdStart(await pageModules());
  console.log('\nThe console: import instructions over the empty handler (callgrind), INIT estimated against the trigger');
  console.table(r.rowsNow);
  console.table(r.rowsBefore);
  console.log(`a typical session (${r.session.pageViews} page views):`, r.session);
  results.consoleColdStart = r;
}
if (wanted('cpu')) {
  const cpu = await measureCpu();
  console.log(
    `\nCPU per trigger request, bundle in-process, I/O stubbed at the SDK's HTTP handler, callgrind: ${cpu.requests} requests after ${cpu.warmUp} (budget: warm ≤ 15 M instructions)`,
  );
  console.table(cpu.rows);
  results.cpuPerRequest = cpu;
}
if (wanted('chaos')) {
  const { chaosPart } = await import('./chaos-part.ts');
  results.chaos = await chaosPart(launchEnv, positive('runs', flags.runs));
}
mkdirSync('bench-results', { recursive: true });
writeFileSync('bench-results/bench.json', `${JSON.stringify(results, null, 2)}\n`);
console.log('written: bench-results/bench.json');
