// `npm run bench`: every benchmark of README "Performance", printed as tables and written to bench-results/bench.json.
import { mkdirSync, writeFileSync } from 'node:fs';
import { startEmulators } from '../../infra/local/emulators.ts';
import { resetConfig } from '../../shared/config.ts';
import { useOwnQueues } from '../support/engine.ts';
import { instrumentClients } from './counting.ts';
import { givenBenchData, measureRoundTrips } from './scenarios.ts';

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
  Object.assign(process.env, emulators.env);
  resetConfig();
  instrumentClients();
  await useOwnQueues();
  if (wanted('round-trips')) {
    const rows = await measureRoundTrips(await givenBenchData());
    console.table(rows.map(({ raw, ...r }) => r));
    results.roundTrips = rows.map(({ raw, ...r }) => r);
  }
} finally {
  await emulators.stop();
}
mkdirSync('bench-results', { recursive: true });
writeFileSync('bench-results/bench.json', `${JSON.stringify(results, null, 2)}\n`);
console.log('written: bench-results/bench.json');
