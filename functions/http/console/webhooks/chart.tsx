import { ScrollX, Table } from '../../../../shared/console/components.tsx';

// A webhook's triggers over the days its stats keep (GET /api/webhooks/{id}/stats: 30 daily counters),
// as an inline SVG of stacked bars (accepted, refused; a <title> per bar) and as a table of the same figures.

type Day = { date: string; accepted: number; rejected: number };

const W = 720;
const H = 160;
const LEFT = 36;
const BOTTOM = 24;
const plural = (n: number, one: string) => `${n.toLocaleString('en')} ${one}${n === 1 ? '' : 's'}`;

export function TriggersChart({ days }: { days: Day[] }) {
  const max = Math.max(1, ...days.map((d) => d.accepted + d.rejected));
  const slot = (W - LEFT) / Math.max(1, days.length);
  const scale = (n: number) => (n / max) * (H - BOTTOM - 8);
  const first = days[0]?.date ?? '';
  const last = days.at(-1)?.date ?? '';
  return (
    <ScrollX label={'Triggers per day'}>
      <svg
        class="chart triggers-chart"
        role="img"
        aria-label={`Triggers per day, ${first} to ${last}: accepted and refused (the table below has the figures)`}
        viewBox={`0 0 ${W} ${H}`}
        width={W}
        height={H}
      >
        <line class="axis" x1={LEFT} y1={H - BOTTOM} x2={W} y2={H - BOTTOM} />
        <text x={LEFT - 6} y={14} text-anchor="end">
          {max}
        </text>
        <text x={LEFT - 6} y={H - BOTTOM} text-anchor="end">
          0
        </text>
        {days.map((d, i) => {
          const x = LEFT + i * slot + 2;
          const a = scale(d.accepted);
          const r = scale(d.rejected);
          const y0 = H - BOTTOM;
          return (
            <g key={d.date}>
              <title>{`${d.date}: ${plural(d.accepted, 'accepted trigger')}, ${plural(d.rejected, 'refused')}`}</title>
              <rect class="bar-SUCCEEDED" x={x} y={y0 - a} width={slot - 4} height={a} />
              <rect class="bar-FAILED" x={x} y={y0 - a - r} width={slot - 4} height={r} />
              {/* A transparent full-height target, so the day's title shows wherever the pointer is over it. */}
              <rect class="bar-hit" x={x} y={8} width={slot - 4} height={y0 - 8} />
            </g>
          );
        })}
        <text x={LEFT} y={H - 6}>
          {first}
        </text>
        <text x={W} y={H - 6} text-anchor="end">
          {last}
        </text>
      </svg>
    </ScrollX>
  );
}

/** The same figures as the chart, newest day first, and the totals. */
export function TriggersTable({ days, total, rejected }: { days: Day[]; total: number; rejected: Record<string, number> }) {
  const refusals = Object.entries(rejected).sort(([a], [b]) => a.localeCompare(b));
  return (
    <>
      <p>
        {plural(total, 'trigger')} in all
        {refusals.length ? `; refused: ${refusals.map(([status, n]) => `${n} with ${status}`).join(', ')}` : ''}.
      </p>
      <details>
        <summary>Triggers per day as a table</summary>
        <Table caption="Triggers per day, newest first">
          <thead>
            <tr>
              <th scope="col">Day (UTC)</th>
              <th scope="col">Accepted</th>
              <th scope="col">Refused</th>
            </tr>
          </thead>
          <tbody>
            {[...days].reverse().map((d) => (
              <tr key={d.date}>
                <th scope="row">{d.date}</th>
                <td>{d.accepted}</td>
                <td>{d.rejected}</td>
              </tr>
            ))}
          </tbody>
        </Table>
      </details>
    </>
  );
}
