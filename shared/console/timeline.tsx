import { isContainerType } from '../engine/steps/index.ts';
import { duration, ScrollX, Status, Table } from './components.tsx';
import { type Bar, barMs, type WaitKind, waitedMs } from './run-timeline.ts';
import { axisMarks, extentOf, linearScale, type Scale, timeScale, type Zoom } from './timeline-scale.ts';

// A run's timeline, drawn: an inline SVG (role="img", one <title> per bar naming its step) with one
// row per executed step, a loop's iterations grouped in bands; on a real-time axis (every bar and
// wait at its true length, zoomable, a bar too short to see drawn as a tick with its duration) or a
// compressed one (waits at a fixed width, their duration written on them); and the same rows as a
// table, for every reader.

/** How the time axis is drawn: `real` (linear, the default) or `compressed` (waits squeezed). */
export type TimeMode = 'real' | 'compressed';

/** A loop's first iterations are drawn (and its last); the others are one line saying how many. */
export const SHOWN_ITERATIONS = 20;

type Row = { bar: Bar } | { loop: string; hidden: Set<number> };

/** The rows drawn: every bar, but of a long loop only its first `SHOWN_ITERATIONS` iterations and its last. */
export function rowsOf(bars: readonly Bar[]): Row[] {
  const last = new Map<string, number>();
  for (const b of bars) if (b.loop !== undefined) last.set(b.loop, Math.max(last.get(b.loop) ?? 0, b.iteration ?? 0));
  const rows: Row[] = [];
  const more = new Map<string, { loop: string; hidden: Set<number> }>();
  for (const b of bars) {
    const i = b.iteration ?? 0;
    if (b.loop === undefined || i < SHOWN_ITERATIONS || i === last.get(b.loop)) {
      rows.push({ bar: b });
      continue;
    }
    let m = more.get(b.loop);
    if (!m) {
      m = { loop: b.loop, hidden: new Set() };
      more.set(b.loop, m);
      rows.push(m);
    }
    m.hidden.add(i);
  }
  return rows;
}

const WAIT_WORDS: Record<WaitKind, string> = {
  approval: 'waited for its approval',
  callback: 'waited for its callback',
  delay: 'delayed',
  retry: 'waited to retry',
};

const named = (b: Bar) => `${b.stepId}${b.iteration !== undefined ? ` (iteration ${b.iteration + 1})` : ''}`;

/** What a bar's tooltip and the table say of it. */
export function barSummary(b: Bar, now: number): string {
  const parts = [`${named(b)}: ${b.status}, ${duration(barMs(b, now))}${b.end === undefined ? ' so far' : ''}`];
  if (b.tries > 1) parts.push(`${b.tries} attempts`);
  if (b.attempt) parts.push(`retry ${b.attempt - 1} of the run`);
  for (const w of b.waits) parts.push(`${WAIT_WORDS[w.kind]} ${duration((w.end ?? now) - w.start)}`);
  if (b.error) parts.push(`error ${b.error.code}`);
  return parts.join(', ');
}

const STATUSES = new Set(['SUCCEEDED', 'FAILED', 'WAITING', 'PENDING', 'RUNNING', 'CANCELLED', 'SKIPPED']);
const barClass = (status: string) => `bar-${STATUSES.has(status) ? status : 'other'}`;
const cut = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);
/** Roughly how wide a text of 12px is. */
const textPx = (s: string) => s.length * 6.6;

const W = 960;
const LABEL = 200;
const X0 = LABEL + 8;
const RIGHT = 76;
const TOP = 24;
const ROW = 24;
const BAR = 14;

function BarRow({
  bar,
  y,
  x,
  now,
  band,
  width,
}: {
  bar: Bar;
  y: number;
  x: (t: number) => number;
  now: number;
  band: boolean;
  width: number;
}) {
  const whole = extentOf(x, bar.start, bar.end ?? now);
  const x1 = whole.x;
  const x2 = x1 + whole.width;
  const label = bar.loop !== undefined ? `#${(bar.iteration ?? 0) + 1} ${bar.stepId}` : bar.stepId;
  const text = (
    <text x={bar.loop !== undefined ? 14 : 0} y={y + BAR - 2}>
      {cut(isContainerType(bar.type) ? `${label} (${bar.items ?? '…'} items)` : label, bar.loop !== undefined ? 27 : 29)}
    </text>
  );
  const cls = barClass(bar.status);
  const waits = bar.waits.map((w) => ({ x1: x(w.start), x2: x(w.end ?? now), ms: (w.end ?? now) - w.start }));
  // The bar's working stretches (between its waits), filled; the waits dashed, their duration written on them.
  const pieces: [number, number][] = [];
  let at = x1;
  for (const w of [...waits].sort((a, b) => a.x1 - b.x1)) {
    if (w.x1 > at) pieces.push([at, w.x1]);
    at = Math.max(at, w.x2);
  }
  if (x2 > at || pieces.length === 0) pieces.push([at, Math.max(x2, at + (waits.length ? 0 : 2))]);
  return (
    <g>
      <title>{`${barSummary(bar, now)}${whole.tick ? ' (too short to draw at this scale: a tick marks it)' : ''}`}</title>
      {band ? <rect class="iter-band" x={0} y={y - 5} width={width} height={ROW} /> : null}
      {text}
      {whole.tick ? (
        <rect class={`${cls} bar-tick`} x={X0 + x1} y={y - 2} width={whole.width} height={BAR + 4} />
      ) : isContainerType(bar.type) ? (
        <rect class={cls} x={X0 + x1} y={y + BAR / 2 - 2} width={x2 - x1} height={4} />
      ) : (
        pieces
          .filter(([a, b]) => b > a)
          .map(([a, b]) => <rect key={a} class={cls} x={X0 + a} y={y} width={Math.max(2, b - a)} height={BAR} rx={2} />)
      )}
      {waits.map((w) => {
        if (whole.tick) return null;
        const words = duration(w.ms);
        const width = Math.max(2, w.x2 - w.x1);
        return (
          <g key={w.x1}>
            <rect class="wait-gap" x={X0 + w.x1} y={y} width={width} height={BAR} />
            {width >= textPx(words) + 6 ? (
              <text class="wait-text" x={X0 + w.x1 + width / 2} y={y + BAR - 3} text-anchor="middle">
                {words}
              </text>
            ) : null}
          </g>
        );
      })}
      <text x={X0 + x2 + 4} y={y + BAR - 2}>
        {duration(barMs(bar, now))}
      </text>
    </g>
  );
}

/** The drawing's width in pixels at `zoom` (the real-time axis only; the compressed one is not zoomed). */
export const drawnWidth = (mode: TimeMode, zoom: Zoom) => (mode === 'real' ? X0 + (W - X0 - RIGHT) * zoom + RIGHT : W);
/** The width of its time axis (the drawing less the step names and the last duration). */
export const plotWidth = (mode: TimeMode, zoom: Zoom) => drawnWidth(mode, zoom) - X0 - RIGHT;

export function TimelineSvg({
  bars,
  start,
  end,
  now,
  label,
  mode = 'real',
  zoom = 1,
}: {
  bars: readonly Bar[];
  start: number;
  end: number;
  now: number;
  label: string;
  mode?: TimeMode;
  zoom?: Zoom;
}) {
  const rows = rowsOf(bars);
  const width = drawnWidth(mode, zoom);
  const plot = width - X0 - RIGHT;
  const scale: Scale = mode === 'real' ? linearScale(start, end, plot) : timeScale(bars, start, end, plot, now);
  const height = TOP + rows.length * ROW + 34;
  const axis = TOP + rows.length * ROW + 4;
  let iterations = 0;
  let previous = '';
  return (
    <ScrollX label={label}>
      <svg
        class={`timeline${zoom > 1 && mode === 'real' ? ' zoomed' : ''}`}
        role="img"
        aria-label={label}
        viewBox={`0 0 ${width} ${height}`}
        width={width}
        height={height}
      >
        {mode === 'real' ? (
          axisMarks(end - start, 6 * zoom).map((t) => (
            <g key={t}>
              <line class="axis-mark" x1={X0 + scale.x(start + t)} y1={18} x2={X0 + scale.x(start + t)} y2={height - 30} />
              <text x={X0 + scale.x(start + t)} y={14} text-anchor={t === 0 ? 'start' : 'middle'}>
                {t === 0 ? '0' : duration(t)}
              </text>
            </g>
          ))
        ) : (
          <>
            <text x={X0} y={14}>
              0
            </text>
            <text x={width - RIGHT} y={14} text-anchor="end">
              {duration(end - start)}
            </text>
          </>
        )}
        {rows.map((r, i) => {
          const y = TOP + i * ROW;
          if (!('bar' in r))
            return (
              <text key={`more-${r.loop}`} class="muted-text" x={14} y={y + BAR - 2}>
                {`… ${r.hidden.size} more iterations of ${r.loop} (see its iterations below)`}
              </text>
            );
          const b = r.bar;
          const where = b.loop !== undefined ? `${b.loop}#${b.iteration}` : '';
          if (where && where !== previous) iterations++;
          previous = where;
          return (
            <BarRow
              key={`${b.stepId}-${b.iteration ?? ''}-${b.start}`}
              bar={b}
              y={y}
              x={scale.x}
              now={now}
              band={where !== '' && iterations % 2 === 1}
              width={width}
            />
          );
        })}
        <line class="axis" x1={X0} y1={axis} x2={width - RIGHT} y2={axis} />
        {scale.segments
          .filter((s) => s.compressed)
          .map((s) => (
            <g key={s.from}>
              <rect class="wait-gap" x={X0 + s.x} y={axis - 3} width={s.width} height={6} />
              <text class="wait-text" x={X0 + s.x + s.width / 2} y={axis + 18} text-anchor="middle">
                {`⋯ ${duration(s.to - s.from)}`}
              </text>
            </g>
          ))}
      </svg>
    </ScrollX>
  );
}

/** The timeline's rows as a table (the same rows, in the same order). */
export function TimelineTable({ bars, start, now, caption }: { bars: readonly Bar[]; start: number; now: number; caption: string }) {
  return (
    <Table caption={caption}>
      <thead>
        <tr>
          <th scope="col">Step</th>
          <th scope="col">Iteration</th>
          <th scope="col">Type</th>
          <th scope="col">Status</th>
          <th scope="col">Started after</th>
          <th scope="col">Duration</th>
          <th scope="col">Waited</th>
          <th scope="col">Attempts</th>
        </tr>
      </thead>
      <tbody>
        {rowsOf(bars).map((r) =>
          'bar' in r ? (
            <tr key={`${r.bar.stepId}-${r.bar.iteration ?? ''}-${r.bar.start}`}>
              <th scope="row">
                <a href={`#step-${r.bar.stepId}`}>{r.bar.stepId}</a>
              </th>
              <td>{r.bar.iteration !== undefined ? `${r.bar.loop} #${r.bar.iteration + 1}` : ''}</td>
              <td>{r.bar.type}</td>
              <td>
                <Status value={r.bar.status} />
                {r.bar.error ? <span class="muted"> {r.bar.error.code}</span> : null}
              </td>
              <td>{duration(r.bar.start - start)}</td>
              <td>{`${duration(barMs(r.bar, now))}${r.bar.end === undefined ? ' so far' : ''}`}</td>
              <td>
                {r.bar.waits.length ? `${duration(waitedMs(r.bar, now))} (${[...new Set(r.bar.waits.map((w) => w.kind))].join(', ')})` : ''}
              </td>
              <td>
                {r.bar.tries > 1 || r.bar.attempt ? `${r.bar.tries}${r.bar.attempt ? ` (run retry ${r.bar.attempt - 1})` : ''}` : '1'}
              </td>
            </tr>
          ) : (
            <tr key={`more-${r.loop}`}>
              <td colSpan={8} class="muted">{`… ${r.hidden.size} more iterations of ${r.loop}, not drawn (see its iterations below)`}</td>
            </tr>
          ),
        )}
      </tbody>
    </Table>
  );
}
