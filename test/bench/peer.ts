// The n8n peer's figures (`/work/shared/peers/n8n`, `bench-n8n.sh`), read from the `summary.json` its
// `bench-summary.mjs` writes, to print beside the local stack's (`npm run bench -- load --peer <file>`).
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';

export type PeerRow = {
  connections: number;
  reps: number;
  runsPerSecond: number;
  p50: number;
  p99: number;
  drainSeconds: number;
  /** n8n's main process and its task runner, per completed run. */
  cpuMsPerRun: number;
  /** From runs.tsv's CPU seconds; otherwise estimated from the summary's CPU % over load + drain + 0.5 s. */
  cpuExact: boolean;
};

export type Peer = { file: string; target: string; rows: PeerRow[] };

type SummaryRow = { target: string; conns: number; reps: number; p50: number; p99: number; drainS: number; effRps: number };
type SummaryRun = { target: string; conns: number; duration: number; execs: number; drainS: number; cpuPct: number };

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
};

/** `file` is a summary.json or the results folder holding it; `target` the peer's webhook (bench-auth: header auth → Set). */
export function readPeer(file: string, target = 'bench-auth'): Peer {
  const path = statSync(file).isDirectory() ? join(file, 'summary.json') : file;
  const summary = JSON.parse(readFileSync(path, 'utf8')) as { rows: SummaryRow[]; runs: SummaryRun[] };
  const targets = [...new Set(summary.rows.map((r) => r.target))];
  const chosen = targets.includes(target) ? target : targets.length === 1 ? (targets[0] as string) : undefined;
  if (!chosen) throw new Error(`${path}: no rows for webhook "${target}" (it has ${targets.join(', ')})`);

  // runs.tsv, beside summary.json, has each rep's CPU seconds; the summary only a CPU percentage.
  const tsv = join(dirname(path), 'runs.tsv');
  const exact = new Map<number, number[]>();
  if (existsSync(tsv)) {
    for (const line of readFileSync(tsv, 'utf8').trim().split('\n').slice(1)) {
      const f = line.split('\t');
      const [t, conns, execs, cpuS] = [f[0], Number(f[1]), Number(f[4]), Number(f[10])];
      if (t !== chosen || !(execs > 0)) continue;
      exact.set(conns, [...(exact.get(conns) ?? []), (cpuS * 1000) / execs]);
    }
  }
  const rows = summary.rows
    .filter((r) => r.target === chosen)
    .map((r): PeerRow => {
      const measured = exact.get(r.conns);
      const estimated = summary.runs
        .filter((x) => x.target === chosen && x.conns === r.conns && x.execs > 0)
        .map((x) => ((x.cpuPct / 100) * (x.duration + x.drainS + 0.5) * 1000) / x.execs);
      return {
        connections: r.conns,
        reps: r.reps,
        runsPerSecond: r.effRps,
        p50: r.p50,
        p99: r.p99,
        drainSeconds: r.drainS,
        cpuMsPerRun: measured?.length ? median(measured) : estimated.length ? median(estimated) : Number.NaN,
        cpuExact: Boolean(measured?.length),
      };
    });
  return { file: path, target: chosen, rows };
}
