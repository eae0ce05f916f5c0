import { isContainerType } from '../engine/steps/index.ts';
import type { Bar } from './run-timeline.ts';

// The timeline's time axis: linear where the run worked, compressed where it only waited. An idle
// stretch (an approval, a callback, a delay, a retry's backoff, a queue) of at least `GAP_MIN_MS` gets
// a fixed width, whatever its length, so a two-day approval does not squash the steps around it into
// nothing (Temporal's complaint); the page writes its duration on it. A shorter one is drawn to
// scale unless that would make it wider than a compressed one.

/** Idle stretches at least this long are drawn compressed. */
export const GAP_MIN_MS = 1000;
/** A compressed stretch's width, at most. */
export const GAP_PX = 84;

export type Segment = { from: number; to: number; x: number; width: number; compressed: boolean };
export type Scale = { x: (t: number) => number; segments: Segment[] };

/** What the run spent working in a bar: its time less its waits (a loop's own bar is its nested steps'). */
function busyOf(b: Bar, now: number): [number, number][] {
  if (isContainerType(b.type)) return [];
  const end = b.end ?? now;
  const waits = b.waits.map((w) => [w.start, w.end ?? now] as const).sort((p, q) => p[0] - q[0]);
  const out: [number, number][] = [];
  let at = b.start;
  for (const [s, e] of waits) {
    if (s > at) out.push([at, Math.min(s, end)]);
    at = Math.max(at, e);
  }
  if (end > at) out.push([at, end]);
  return out;
}

/** The scale of `bars` between `start` and `end` over `width` pixels. */
export function timeScale(bars: readonly Bar[], start: number, end: number, width: number, now: number): Scale {
  const clamp = (t: number) => Math.min(end, Math.max(start, t));
  const busy = bars.flatMap((b) => busyOf(b, now));
  const points = new Set<number>([start, end]);
  for (const b of bars) {
    points.add(clamp(b.start));
    points.add(clamp(b.end ?? now));
    for (const w of b.waits) {
      points.add(clamp(w.start));
      points.add(clamp(w.end ?? now));
    }
  }
  const sorted = [...points].sort((a, b) => a - b);
  // Adjacent pieces of the same kind (busy or idle) are one segment.
  const pieces: { from: number; to: number; idle: boolean }[] = [];
  for (let i = 1; i < sorted.length; i++) {
    const from = sorted[i - 1] as number;
    const to = sorted[i] as number;
    const mid = (from + to) / 2;
    const idle = !busy.some(([s, e]) => s <= mid && mid <= e);
    const last = pieces.at(-1);
    if (last && last.idle === idle) last.to = to;
    else pieces.push({ from, to, idle });
  }
  const compressed = pieces.map((p) => p.idle && p.to - p.from >= GAP_MIN_MS);
  // An idle stretch shorter than that (a queue's latency) is drawn to scale, but never wider than a
  // compressed one: if it would be, it is compressed too, and the working time gets the room.
  let gapPx = 0;
  let perMs = 0;
  for (;;) {
    const gaps = compressed.filter(Boolean).length;
    const linearMs = pieces.reduce((n, p, i) => n + (compressed[i] ? 0 : p.to - p.from), 0);
    // Gaps take at most 60% of the width; with no working time at all, all of it.
    gapPx = gaps === 0 ? 0 : Math.min(GAP_PX, (linearMs > 0 ? width * 0.6 : width) / gaps);
    perMs = linearMs > 0 ? (width - gapPx * gaps) / linearMs : 0;
    const cap = gaps === 0 ? GAP_PX : gapPx;
    const wide = pieces.map((p, i) => !compressed[i] && p.idle && (p.to - p.from) * perMs > cap);
    if (!wide.includes(true)) break;
    wide.forEach((w, i) => {
      if (w) compressed[i] = true;
    });
  }
  let x = 0;
  const segments = pieces.map((p, i) => {
    const w = compressed[i] ? gapPx : (p.to - p.from) * perMs;
    const s = { from: p.from, to: p.to, x, width: w, compressed: compressed[i] as boolean };
    x += w;
    return s;
  });
  const at = (t: number) => {
    const c = clamp(t);
    const s = segments.find((g) => c >= g.from && c <= g.to);
    if (!s) return 0;
    return s.to === s.from ? s.x : s.x + ((c - s.from) / (s.to - s.from)) * s.width;
  };
  return { x: at, segments };
}

// The real-time axis (the run page's default): linear from the run's start to its end, every bar at
// its true length. `zoom` widens the drawing (it scrolls inside its wrapper); a bar too short to see
// at that scale is drawn as a tick of `TICK_PX`, never as a bar of a length it did not take, and its
// duration is written beside it.

/** The zoom levels of the real-time axis (the drawing's width is the plot's times this). */
export const ZOOMS = [1, 2, 4, 8] as const;
export type Zoom = (typeof ZOOMS)[number];
/** A bar narrower than this at the scale drawn is a tick (`TICK_PX` wide) instead. */
export const TICK_PX = 3;
export const TICK_PX_DRAWN = 2;

/** A linear scale of `[start, end]` over `width` pixels: one segment, nothing compressed. */
export function linearScale(start: number, end: number, width: number): Scale {
  const span = Math.max(1, end - start);
  const x = (t: number) => (Math.min(end, Math.max(start, t)) - start) * (width / span);
  return { x, segments: [{ from: start, to: end, x: 0, width, compressed: false }] };
}

/** Where a stretch from `a` to `b` is drawn: its true width, or a tick when that is under `TICK_PX`. */
export function extentOf(x: (t: number) => number, a: number, b: number): { x: number; width: number; tick: boolean } {
  const x1 = x(a);
  const width = Math.max(0, x(b) - x1);
  return width < TICK_PX ? { x: x1, width: TICK_PX_DRAWN, tick: true } : { x: x1, width, tick: false };
}

/** Round durations for the real-time axis's marks: about `count` of them between 0 and `span` ms. */
export function axisMarks(span: number, count: number): number[] {
  if (span <= 0) return [0];
  const raw = span / Math.max(1, count);
  const steps = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10_000, 15_000, 30_000, 60_000, 120_000, 300_000, 600_000];
  const hours = [900_000, 1_800_000, 3_600_000, 7_200_000, 21_600_000, 43_200_000, 86_400_000];
  const step = [...steps, ...hours].find((s) => s >= raw) ?? Math.ceil(raw / 86_400_000) * 86_400_000;
  const marks: number[] = [];
  for (let t = 0; t <= span; t += step) marks.push(t);
  return marks;
}
