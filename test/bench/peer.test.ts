import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { readPeer } from './peer.ts';

/** A results folder as the n8n peer's bench-n8n.sh and bench-summary.mjs leave it: two reps at 10 connections. */
function givenPeerResults(withTsv: boolean) {
  dir = mkdtempSync(join(tmpdir(), 'flowgate-peer-'));
  const run = (rep: number, execs: number, cpuPct: number) => ({
    target: 'bench-auth',
    conns: 10,
    rep,
    duration: 10,
    execs,
    drainS: 0.5,
    cpuPct,
  });
  const summary = {
    rows: [
      { target: 'bench-auth', conns: 10, reps: 2, p50: 319, p99: 396, drainS: 0.5, effRps: 31 },
      { target: 'bench', conns: 10, reps: 2, p50: 1, p99: 2, drainS: 0, effRps: 99 },
    ],
    runs: [run(1, 300, 100), run(2, 330, 110)],
  };
  writeFileSync(join(dir, 'summary.json'), JSON.stringify(summary));
  if (withTsv)
    writeFileSync(
      join(dir, 'runs.tsv'),
      [
        'target\tconns\trep\tfile\texecs\tdrain_s\trss_before_kb\trss_peak_kb\trss_after_kb\trunner_peak_kb\tn8n_cpu_s\twall_s',
        'bench-auth\t10\t1\ta.json\t300\t0.5\t1\t1\t1\t0\t9.000\t11.0',
        'bench-auth\t10\t2\tb.json\t330\t0.5\t1\t1\t1\t0\t11.550\t11.0',
        'bench\t10\t1\tc.json\t990\t0\t1\t1\t1\t0\t1.000\t10.0',
      ].join('\n'),
    );
  return dir;
}

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

it("takes the peer's runs/s, latency and CPU per run of its bench-auth webhook, CPU from runs.tsv", () => {
  const peer = readPeer(givenPeerResults(true));
  expect(peer.target).toBe('bench-auth');
  // CPU per run: 9,000 ms / 300 runs and 11,550 ms / 330 runs, median 32.5.
  expect(peer.rows).toEqual([
    { connections: 10, reps: 2, runsPerSecond: 31, p50: 319, p99: 396, drainSeconds: 0.5, cpuMsPerRun: 32.5, cpuExact: true },
  ]);
});

it('estimates the CPU per run from the CPU % over load, drain and the drain check without runs.tsv', () => {
  const peer = readPeer(join(givenPeerResults(false), 'summary.json'));
  // 100 % of 11 s over 300 runs, 110 % of 11 s over 330 runs: both 36.67 ms.
  expect(peer.rows[0]?.cpuMsPerRun).toBeCloseTo(36.67, 1);
  expect(peer.rows[0]?.cpuExact).toBe(false);
});

it('refuses a summary without the webhook asked for', () => {
  expect(() => readPeer(givenPeerResults(true), 'bench-noop')).toThrow(/no rows for webhook "bench-noop"/);
});
