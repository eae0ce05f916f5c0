import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';

/** Import a bundle in a fresh Node process and print how long the import took (ms). */
const importScript = (file: string) =>
  `const t = performance.now(); await import(${JSON.stringify(`file://${resolve(file)}`)}); console.log(performance.now() - t);`;

/** The environment a deployed trigger has (its settings are checked at import; nothing is called). */
const ENV = {
  ...process.env,
  AWS_REGION: 'us-east-1',
  TABLE_NAME: 'flowgate-table',
  RUNS_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/123456789012/runs',
  NOTIFY_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/123456789012/notify',
  ARTIFACTS_BUCKET: 'flowgate-artifacts',
  PUBLIC_BASE_URL: 'https://flows.example.com',
  POWERTOOLS_LOG_LEVEL: 'SILENT',
  POWERTOOLS_METRICS_DISABLED: 'true',
};

export const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? (s[(s.length - 1) / 2] as number) : ((s[s.length / 2 - 1] as number) + (s[s.length / 2] as number)) / 2;
};

/**
 * A function's INIT as Lambda bills it, approximated on this machine: a fresh Node process from its
 * start (`performance.now()` counts from the process's time origin) until the bundle is imported, the
 * runtime's own start-up included; median of `runs` processes (ms). Lambda's INIT also includes the
 * sandbox's start and runs at the function's memory share of a vCPU, so the figure is a floor.
 */
export function initTimes(file: string, runs = 10) {
  const script = `await import(${JSON.stringify(`file://${resolve(file)}`)}); console.log(performance.now());`;
  const times = Array.from({ length: runs }, () => {
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { env: ENV, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`import of ${file} failed: ${r.stderr}`);
    return Number(r.stdout.trim());
  });
  return median(times);
}

/** Wall time of the import alone, in `runs` fresh processes: median, min, max (ms). */
export function importTimes(file: string, runs = 20) {
  const times = Array.from({ length: runs }, () => {
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', importScript(file)], { env: ENV, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`import of ${file} failed: ${r.stderr}`);
    return Number(r.stdout.trim());
  });
  return { median: median(times), min: Math.min(...times), max: Math.max(...times) };
}

/**
 * Instructions of a whole fresh process that imports the bundle, counted by callgrind (repeatable on
 * a noisy machine, unlike times). Compare with the empty handler's count for the import's own cost.
 */
export function importInstructions(file: string): number {
  const r = spawnSync(
    'valgrind',
    ['--tool=callgrind', '--callgrind-out-file=/dev/null', process.execPath, '--input-type=module', '-e', importScript(file)],
    { env: ENV, encoding: 'utf8' },
  );
  const collected = /Collected : (\d+)/.exec(r.stderr)?.[1];
  if (r.status !== 0 || !collected) throw new Error(`callgrind of ${file} failed: ${r.stderr.slice(-2000)}`);
  return Number(collected);
}
