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

/** A mark per status, beside its name (never colour alone): a symbol a glance tells apart. */
const MARKS: Record<RunRow['status'], string> = {
  PENDING: '○',
  RUNNING: '►',
  WAITING_APPROVAL: '‖',
  WAITING_CALLBACK: '‖',
  SUCCEEDED: '✓',
  FAILED: '✗',
  CANCELLED: '⊘',
  INTERRUPTED: '!',
};

/** A run's status: its mark (hidden from screen readers, which read the name) and its name, coloured by class (a narrow column may break it after an underscore). */
export function StatusMark({ value }: { value: RunRow['status'] }) {
  const parts = value.split('_');
  return (
    <span class={`status status-${value} status-mark`}>
      <span aria-hidden="true" class="mark">
        {MARKS[value]}
      </span>
      {'\u00a0'}
      <span>{parts.map((part, i) => (i === parts.length - 1 ? part : [`${part}_`, <wbr key={part} />]))}</span>
    </span>
  );
}

/** How long ago `ms` was at `now`, as a person says it: just now, 40 s ago, 3 min ago, 5 h ago, 2 d ago. */
export function ago(ms: number, now: number): string {
  const s = Math.floor((now - ms) / 1000);
  if (s < 5) return 'just now';
  if (s < 60) return `${s} s ago`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ago`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h} h ago`;
  return `${Math.floor(h / 24)} d ago`;
}

/**
 * A time relative to `now` (computed at render: a live list renders again), the absolute UTC time in
 * its `datetime` and `title`, and written out small beneath it.
 */
export function RelativeTime({ ms, now }: { ms: number; now: number }) {
  const iso = new Date(ms).toISOString();
  const absolute = `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC`;
  return (
    <>
      <time datetime={iso} title={absolute}>
        {ago(ms, now)}
      </time>
      <small class="muted absolute-time">{absolute}</small>
    </>
  );
}
