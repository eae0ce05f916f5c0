import type { RunRow } from '../domain/read-types.ts';
import { isActive } from '../domain/run-list.ts';
import { duration, ScrollX } from './components.tsx';

// Pieces of the runs list and the overview: the chart of runs by status, a run's trigger and duration,
// a workflow's name. Each renders through Preact (escaped by construction).

/** Statuses in the order charts and tables list them: in progress, then ended. */
export const STATUS_ORDER = [
  'PENDING',
  'RUNNING',
  'WAITING_APPROVAL',
  'WAITING_CALLBACK',
  'SUCCEEDED',
  'FAILED',
  'CANCELLED',
  'INTERRUPTED',
] as const satisfies readonly RunRow['status'][];

/** Runs per status, in `STATUS_ORDER`, statuses without runs left out. */
export function countByStatus(rows: readonly Pick<RunRow, 'status'>[]): [RunRow['status'], number][] {
  const counts = new Map<string, number>();
  for (const r of rows) counts.set(r.status, (counts.get(r.status) ?? 0) + 1);
  return STATUS_ORDER.flatMap((s) => (counts.get(s) ? [[s, counts.get(s) as number] as [RunRow['status'], number]] : []));
}

const plural = (n: number, one: string, many = `${one}s`) => `${n.toLocaleString('en')} ${n === 1 ? one : many}`;

const ROW = 32;
const LABEL = 180;
const BAR = 470;
const WIDTH = 720;

/**
 * A horizontal bar per status (`<svg role="img">`, named by `label`), coloured by class (`bar-<STATUS>`,
 * console.css), the status and the count written beside each bar and in a `<title>` per bar. The page
 * shows the same figures in a table: the chart is never the only way to read them.
 */
export function StatusChart({ counts, label }: { counts: readonly [string, number][]; label: string }) {
  const max = Math.max(1, ...counts.map(([, n]) => n));
  const height = counts.length * ROW + 8;
  return (
    <ScrollX label={label}>
      <svg class="chart" role="img" aria-label={label} viewBox={`0 0 ${WIDTH} ${height}`} width={WIDTH} height={height}>
        {counts.map(([status, n], i) => {
          const y = 4 + i * ROW;
          const w = Math.max(2, Math.round((n / max) * BAR));
          return (
            <g key={status}>
              <text x={LABEL - 8} y={y + 21} text-anchor="end">
                {status}
              </text>
              <rect class={`bar-${status}`} x={LABEL} y={y + 4} width={w} height={ROW - 8} rx={3}>
                <title>{`${status}: ${plural(n, 'run')}`}</title>
              </rect>
              <text x={LABEL + w + 6} y={y + 21}>
                {n.toLocaleString('en')}
              </text>
            </g>
          );
        })}
      </svg>
    </ScrollX>
  );
}

/** How a run started; a retried run says how often it was retried. */
export const TriggerText = ({ run }: { run: Pick<RunRow, 'trigger' | 'retries'> }) => (
  <>
    {run.trigger}
    {run.retries ? <span class="muted nowrap">{`, retried ${run.retries}×`}</span> : null}
  </>
);

/** How long a run took, or has been going (`so far`) while it is in progress. */
export function runDuration(run: Pick<RunRow, 'status' | 'startedAt' | 'finishedAt'>, now: number): string {
  if (run.finishedAt !== undefined) return duration(run.finishedAt - run.startedAt);
  return isActive(run) ? `${duration(now - run.startedAt)} so far` : '—';
}

/** A time in a narrow column: its date and its time each kept on one line (UTC, machine-readable in `datetime`). */
export function ShortTime({ ms }: { ms: number }) {
  const iso = new Date(ms).toISOString();
  return (
    <time datetime={iso}>
      <span class="nowrap">{iso.slice(0, 10)}</span> <span class="nowrap">{`${iso.slice(11, 19)} UTC`}</span>
    </time>
  );
}

/** A workflow by its name when known, else its id. */
export const WorkflowName = ({ id, names }: { id: string; names: ReadonlyMap<string, string> }) => {
  const name = names.get(id);
  return name === undefined ? <span class="muted">{id}</span> : <span title={id}>{name}</span>;
};
