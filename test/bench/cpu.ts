import { spawn } from 'node:child_process';
import { bundle } from './bundles.ts';

/** The trigger benchmark program (cpu-entry.ts) bundled with the CDK settings: the deployed code. */
export const cpuBundle = () => bundle('cpu-trigger', 'test/bench/cpu-entry.ts');

/**
 * The environment of a deployed trigger function, with nothing reachable: fake credentials, the
 * queue URLs in AWS's shape (the SDK would send to their host). Log level and metrics as deployed:
 * the INFO access log line and the EMF metric lines are written (to a discarded stdout).
 */
function deployedEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME };
  return {
    ...env,
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'AKIDBENCHMARK',
    AWS_SECRET_ACCESS_KEY: 'bench',
    AWS_SESSION_TOKEN: 'bench',
    TABLE_NAME: 'flowgate',
    RUNS_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/123456789012/flowgate-runs',
    NOTIFY_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/123456789012/flowgate-notify',
    ARTIFACTS_BUCKET: 'flowgate-artifacts',
    POWERTOOLS_SERVICE_NAME: 'flowgate',
    POWERTOOLS_METRICS_NAMESPACE: 'Flowgate',
    NODE_OPTIONS: '',
  };
}

/** Instructions of one whole process (callgrind) that runs the bundle: `warmUp`, then `warm` cached, then `cold` uncached requests. */
type Report = { callsPerRequest: { warm: Record<string, number>; cold: Record<string, number> } };

function instructions(file: string, warmUp: number, warm: number, cold: number): Promise<{ count: number; report: Report }> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      'valgrind',
      [
        '--tool=callgrind',
        '--callgrind-out-file=/dev/null',
        process.execPath,
        // Single-threaded V8 with a fixed GC schedule: the same program gives the same count (±0.01 %),
        // JIT compilation and GC included (on the main thread instead of helper threads).
        '--predictable',
        file,
        String(warmUp),
        String(warm),
        String(cold),
      ],
      { env: deployedEnv(), stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let err = '';
    child.stderr.on('data', (c: Buffer) => {
      err += c.toString();
    });
    child.on('error', reject);
    child.on('exit', (code) => {
      const collected = /Collected : (\d+)/.exec(err)?.[1];
      const report = /^cpu-entry: (.*)$/m.exec(err)?.[1];
      if (code !== 0 || !collected || !report) reject(new Error(`callgrind of ${file} failed (${code}): ${err.slice(-2000)}`));
      else resolve({ count: Number(collected), report: JSON.parse(report) as Report });
    });
  });
}

/**
 * Instructions per trigger request, in-process with I/O stubbed at the SDK's network boundary, by
 * difference: three callgrind runs of the same program with the same warm-up (process start, import,
 * bench data, `warmUp` requests) and `n` more warm requests, then `n` more cold ones. Process start,
 * import and warm-up cancel out; what remains is `n` requests' own instructions, JIT and GC included.
 * The runs go in parallel (counts do not depend on timing). The JIT is still improving after 100
 * requests (in a trial, 11.8 M a warm request after 100, 10.3 M after 300), so the warm-up is 300.
 */
export async function measureCpu(opts: { warmUp?: number; n?: number } = {}) {
  const { warmUp = 300, n = 40 } = opts;
  const { file } = await cpuBundle();
  const [base, warm, cold] = await Promise.all([
    instructions(file, warmUp, 0, 0),
    instructions(file, warmUp, n, 0),
    instructions(file, warmUp, n, n),
  ]);
  const calls = (c: Record<string, number>) =>
    Object.entries(c)
      .filter(([, v]) => v > 0)
      .map(([k, v]) => `${k}×${v}`)
      .join(' ');
  return {
    warmUp,
    requests: n,
    baseInstructions: base.count,
    rows: [
      {
        cache: 'warm',
        instructionsPerRequest: Math.round((warm.count - base.count) / n),
        sdkCalls: calls(cold.report.callsPerRequest.warm),
      },
      {
        cache: 'cold',
        instructionsPerRequest: Math.round((cold.count - warm.count) / n),
        sdkCalls: calls(cold.report.callsPerRequest.cold),
      },
    ],
  };
}
