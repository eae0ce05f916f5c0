import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { workerSettings } from '../../functions/bindings.ts';
import { route as trigger } from '../../functions/http/webhooks/trigger.route.ts';
import { settingsFor } from '../../shared/config.ts';

/** What a deployed function's environment holds (valid values of the shapes AWS gives). */
const DEPLOYED = {
  TABLE_NAME: 'flowgate-prod-Table1234',
  RUNS_QUEUE_URL: 'https://sqs.eu-west-1.amazonaws.com/123456789012/runs',
  NOTIFY_QUEUE_URL: 'https://sqs.eu-west-1.amazonaws.com/123456789012/notify',
  ARTIFACTS_BUCKET: 'flowgate-prod-artifacts-1a2b3c',
  PUBLIC_BASE_URL: 'https://flows.example.com',
};

/** Import a function's module in a fresh Node process (as a cold start does) with exactly `env`. */
function coldStart(module: string, env: Record<string, string | undefined>) {
  const r = spawnSync(
    process.execPath,
    [
      '--import',
      'tsx',
      '--input-type=module',
      '-e',
      `await import(${JSON.stringify(`./functions/${module}.ts`)}); console.log('imported');`,
    ],
    {
      encoding: 'utf8',
      env: { PATH: process.env.PATH, AWS_REGION: 'eu-west-1', POWERTOOLS_LOG_LEVEL: 'SILENT', POWERTOOLS_METRICS_DISABLED: 'true', ...env },
    },
  );
  return { ok: r.status === 0 && r.stdout.includes('imported'), output: `${r.stdout}${r.stderr}` };
}
const without = (name: string) => ({ ...DEPLOYED, [name]: undefined });

// Each check starts Node processes with tsx: seconds each on a busy machine.
describe('settings are checked at a cold start, per function', { timeout: 180_000 }, () => {
  it('the trigger declares what its grants give it: the table, the queues (the heavy lane optional) and the bucket', () => {
    expect(settingsFor(trigger.grants).sort()).toEqual([
      'ARTIFACTS_BUCKET',
      'HEAVY_RUNS_QUEUE_URL',
      'NOTIFY_QUEUE_URL',
      'RUNS_QUEUE_URL',
      'TABLE_NAME',
    ]);
    expect(workerSettings('worker/notify').sort()).toEqual(['NOTIFY_QUEUE_URL', 'PUBLIC_BASE_URL', 'TABLE_NAME']);
  });

  it('a function with its settings imports; without one it needs it fails at import, naming it', () => {
    expect(coldStart('http/webhooks/trigger', DEPLOYED)).toMatchObject({ ok: true });
    const missing = coldStart('http/webhooks/trigger', without('ARTIFACTS_BUCKET'));
    expect(missing.ok).toBe(false);
    expect(missing.output).toContain('ConfigError: Configuration: ARTIFACTS_BUCKET is not set');
  });

  it('a malformed setting fails the import with its name and what is wrong; several are named together', () => {
    const malformed = coldStart('http/webhooks/trigger', { ...DEPLOYED, RUNS_QUEUE_URL: 'runs-queue' });
    expect(malformed.ok).toBe(false);
    expect(malformed.output).toContain('RUNS_QUEUE_URL is malformed: must be an http(s) URL');
    const both = coldStart('http/v1/workflows/start-run', { ...without('TABLE_NAME'), NOTIFY_QUEUE_URL: '' });
    expect(both.output).toContain('Configuration: TABLE_NAME is not set; NOTIFY_QUEUE_URL is not set');
  });

  it('workers and sweeps check theirs: the notifications worker its queue (its backoff), the runs worker its links', () => {
    expect(coldStart('worker/notify', without('NOTIFY_QUEUE_URL')).output).toContain('NOTIFY_QUEUE_URL is not set');
    expect(coldStart('worker/execute', without('PUBLIC_BASE_URL')).output).toContain('PUBLIC_BASE_URL is not set');
    expect(coldStart('sweep/scheduled', without('RUNS_QUEUE_URL')).output).toContain('RUNS_QUEUE_URL is not set');
  });

  it('a function asks only for what it is given: health needs nothing, a read route no queue or bucket', () => {
    expect(coldStart('http/health/get', {})).toMatchObject({ ok: true });
    expect(coldStart('http/v1/executions/get', { TABLE_NAME: DEPLOYED.TABLE_NAME })).toMatchObject({ ok: true });
    // HEAD of the approval link shares the GET's code, not its grants: it reads only.
    expect(coldStart('http/approvals/link-head', { TABLE_NAME: DEPLOYED.TABLE_NAME })).toMatchObject({ ok: true });
  });
});
