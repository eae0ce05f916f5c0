// `npm run bench`: every benchmark of README "Performance", printed as tables and written to bench-results/bench.json.
import { mkdirSync, writeFileSync } from 'node:fs';
import { startEmulators } from '../../infra/local/emulators.ts';
import { resetConfig } from '../../shared/config.ts';
import { bundle, emptyHandler, FUNCTIONS, KIB, sdkFloor } from './bundles.ts';
import { importInstructions, importTimes } from './cold-start.ts';
import { measureCpu } from './cpu.ts';

process.env.POWERTOOLS_LOG_LEVEL ??= 'SILENT';
process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';
const only = process.argv.slice(2);
const wanted = (part: string) => only.length === 0 || only.includes(part);
const results: Record<string, unknown> = {
  machine: { cpus: (await import('node:os')).cpus().length, node: process.version },
  at: new Date().toISOString(),
};

const emulators = await startEmulators();
try {
  // The handlers check their settings when imported, so they are imported once these are set.
  Object.assign(process.env, emulators.env);
  process.env.PUBLIC_BASE_URL ??= 'http://flowgate.bench';
  resetConfig();
  const { useOwnQueues } = await import('../support/engine.ts');
  const { instrumentClients } = await import('./counting.ts');
  const { measureLoad } = await import('./load.ts');
  const { givenBenchData, measureRoundTrips, measureRunCosts, measureTriggerTimes, measureWorker } = await import('./scenarios.ts');
  await instrumentClients();
  await useOwnQueues();
  const data = await givenBenchData();
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
      '\nDynamoDB per webhook run, warm (targets: 1 step ≤ 6 calls and ≤ 16 write units; a further set step ≤ 1 call, ≤ 3 units; a batch of 10: per run)',
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
  if (wanted('load')) {
    const { rows, dispatch } = await measureLoad(data, { seconds: 10 });
    console.log('\nThroughput and latency of the local stack, autocannon, 10 s per row (approvals: one POST per pending approval)');
    console.table(rows);
    console.log("\nDispatch latency, local stack: trigger 200 → worker claim (run's step.started), ms");
    console.table(dispatch);
    results.load = rows;
    results.dispatch = dispatch;
  }
} finally {
  await emulators.stop();
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
if (wanted('cpu')) {
  const cpu = await measureCpu();
  console.log(
    `\nCPU per trigger request, bundle in-process, I/O stubbed at the SDK's HTTP handler, callgrind: ${cpu.requests} requests after ${cpu.warmUp} (budget: warm ≤ 15 M instructions)`,
  );
  console.table(cpu.rows);
  results.cpuPerRequest = cpu;
}
mkdirSync('bench-results', { recursive: true });
writeFileSync('bench-results/bench.json', `${JSON.stringify(results, null, 2)}\n`);
console.log('written: bench-results/bench.json');
