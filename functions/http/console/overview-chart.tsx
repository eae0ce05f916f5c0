import { Table } from '../../../shared/console/components.tsx';
import type { HourBar } from '../../../shared/domain/run-overview.ts';

// The overview's runs over time: one bar per hour (runs that ended in it: succeeded, failed, cancelled
// or interrupted, stacked), an inline SVG without text (its labels are HTML beside it, so they keep
// their size when the chart shrinks to a phone's width), named for screen readers, a <title> per
// hour, and the same figures as a table.

const W = 720;
const H = 160;
const plural = (n: number, one: string) => `${n.toLocaleString('en')} ${one}${n === 1 ? '' : 's'}`;
/** An hour as people read it: `2026-12-02 11:00 UTC`. */
export const hourText = (ms: number) => `${new Date(ms).toISOString().slice(0, 13).replace('T', ' ')}:00 UTC`;
const ended = (h: HourBar) => h.succeeded + h.failed + h.other;
const hourTitle = (h: HourBar) =>
  `${hourText(h.hour)}: ${plural(h.started, 'run')} started; ended ${h.succeeded} succeeded, ${h.failed} failed, ${h.other} cancelled or interrupted`;

export function HoursChart({ hours, label }: { hours: readonly HourBar[]; label: string }) {
  const most = Math.max(0, ...hours.map(ended));
  const max = Math.max(1, most);
  const slot = W / Math.max(1, hours.length);
  const gap = slot > 8 ? 2 : 0;
  const scale = (n: number) => (n / max) * (H - 4);
  const first = hours[0];
  const last = hours.at(-1);
  return (
    <figure class="hours-chart">
      <p class="chart-scale muted">{`Bars: runs ended per hour; the most in an hour: ${most.toLocaleString('en')}`}</p>
      <svg class="chart" role="img" aria-label={label} viewBox={`0 0 ${W} ${H}`} width={W} height={H}>
        <line class="axis" x1={0} y1={H} x2={W} y2={H} />
        {hours.map((h, i) => {
          const x = i * slot + gap / 2;
          const s = scale(h.succeeded);
          const f = scale(h.failed);
          const o = scale(h.other);
          return (
            <g key={h.hour}>
              <title>{hourTitle(h)}</title>
              <rect class="bar-SUCCEEDED" x={x} y={H - s} width={slot - gap} height={s} />
              <rect class="bar-FAILED" x={x} y={H - s - f} width={slot - gap} height={f} />
              <rect class="bar-other" x={x} y={H - s - f - o} width={slot - gap} height={o} />
              <rect class="bar-hit" x={x} y={0} width={slot - gap} height={H} />
            </g>
          );
        })}
      </svg>
      <figcaption class="chart-axis">
        <span>{first ? hourText(first.hour) : ''}</span>
        <span>{last ? hourText(last.hour) : ''}</span>
      </figcaption>
      <p class="chart-legend">
        <span class="key key-SUCCEEDED">Succeeded</span> <span class="key key-FAILED">Failed</span>{' '}
        <span class="key key-other">Cancelled or interrupted</span>
      </p>
    </figure>
  );
}

/** The chart's figures, newest hour first, hours without runs left out. */
export function HoursTable({ hours }: { hours: readonly HourBar[] }) {
  const shown = hours.filter((h) => h.started > 0 || ended(h) > 0).reverse();
  return (
    <details>
      <summary>Runs per hour as a table</summary>
      {shown.length === 0 ? (
        <p>No run started or ended in these hours.</p>
      ) : (
        <Table caption="Runs per hour, newest first (hours without runs left out)">
          <thead>
            <tr>
              <th scope="col">Hour</th>
              <th scope="col">Started</th>
              <th scope="col">Succeeded</th>
              <th scope="col">Failed</th>
              <th scope="col">Cancelled or interrupted</th>
            </tr>
          </thead>
          <tbody>
            {shown.map((h) => (
              <tr key={h.hour}>
                <th scope="row" class="nowrap">
                  {hourText(h.hour)}
                </th>
                <td>{h.started}</td>
                <td>{h.succeeded}</td>
                <td>{h.failed}</td>
                <td>{h.other}</td>
              </tr>
            ))}
          </tbody>
        </Table>
      )}
    </details>
  );
}
