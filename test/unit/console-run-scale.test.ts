import { describe, expect, it } from 'vitest';
import { countByStatus, ITERATIONS_PAGE, iterationPage, iterationStatuses } from '../../shared/console/run-iterations.ts';
import type { Bar } from '../../shared/console/run-timeline.ts';
import { axisMarks, extentOf, linearScale, TICK_PX, TICK_PX_DRAWN, timeScale, type Zoom } from '../../shared/console/timeline-scale.ts';
import { drawnWidth, plotWidth } from '../../shared/console/timeline.tsx';
import type { StepState } from '../../shared/db/entities/execution-state.ts';

/** The run page's real-time axis (zoom, ticks for bars too short to draw) and its iteration browser's statuses, as pure functions. */

const bar = (stepId: string, start: number, end: number, extra: Partial<Bar> = {}): Bar => ({
  stepId,
  type: 'set',
  status: 'SUCCEEDED',
  start,
  end,
  tries: 1,
  waits: [],
  ...extra,
});

describe('the real-time axis', () => {
  const MIN17 = 17 * 60_000;

  it('draws every stretch at its true length: a 2 ms step of a 17-minute run is a tick, never 60 % of the width', () => {
    const scale = linearScale(0, MIN17, 752);
    const tiny = extentOf(scale.x, 1000, 1002);
    expect(tiny.tick).toBe(true);
    expect(tiny.width).toBe(TICK_PX_DRAWN);
    expect(tiny.x).toBeCloseTo((1000 / MIN17) * 752, 6);
    // The compressed axis, for contrast, gives the same step far more room than its share of the time.
    const bars = [
      bar('tiny', 1000, 1002),
      bar('wait', 1002, MIN17, { type: 'delay', waits: [{ kind: 'delay', start: 1002, end: MIN17 }] }),
    ];
    const compressed = timeScale(bars, 0, MIN17, 752, MIN17);
    expect(compressed.x(1002) - compressed.x(1000)).toBeGreaterThan(0.5 * 752);
    // Half the time is half the width; the ends are the plot's ends; times outside are clamped.
    expect(scale.x(MIN17 / 2)).toBeCloseTo(376, 6);
    expect(scale.x(-5)).toBe(0);
    expect(scale.x(MIN17 * 2)).toBe(752);
    expect(scale.segments).toEqual([{ from: 0, to: MIN17, x: 0, width: 752, compressed: false }]);
  });

  it('keeps a 1 s delay a thousand times wider than a 1 ms bar, and a bar wide enough to see at its true width', () => {
    const scale = linearScale(0, 2000, 1000);
    const ms = extentOf(scale.x, 0, 1);
    const delay = extentOf(scale.x, 1, 1001);
    expect(ms.tick).toBe(true);
    expect(delay).toEqual({ x: 0.5, width: 500, tick: false });
    expect(delay.width).toBeGreaterThan(ms.width * 100);
    // At the threshold a bar is drawn as it is.
    const edge = extentOf(scale.x, 100, 100 + TICK_PX * 2);
    expect(edge).toEqual({ x: 50, width: TICK_PX, tick: false });
  });

  it('zooms by widening the drawing: the same time takes zoom times the pixels', () => {
    expect(plotWidth('real', 8) / plotWidth('real', 1)).toBe(8);
    expect(drawnWidth('real', 8)).toBeGreaterThan(drawnWidth('real', 1) * 5);
    // The compressed axis has a fixed width, whatever the zoom.
    expect(drawnWidth('compressed', 8)).toBe(drawnWidth('compressed', 1));
    // A 10 ms step of a 10 s run: a tick at zoom 1, a bar at zoom 8.
    const at = (z: Zoom) => extentOf(linearScale(0, 10_000, plotWidth('real', z)).x, 5000, 5010);
    expect(at(1).tick).toBe(true);
    expect(at(8).tick).toBe(false);
    expect(at(8).width).toBeCloseTo(10 * (plotWidth('real', 8) / 10_000), 6);
  });

  it('marks round durations along the axis', () => {
    expect(axisMarks(60_000, 6)).toEqual([0, 10_000, 20_000, 30_000, 40_000, 50_000, 60_000]);
    expect(axisMarks(17 * 60_000, 6)).toEqual([0, 300_000, 600_000, 900_000]);
    expect(axisMarks(7, 6)).toEqual([0, 2, 4, 6]);
    expect(axisMarks(0, 6)).toEqual([0]);
  });
});

describe("a loop's iterations", () => {
  const loop = (over: Partial<StepState>): StepState =>
    ({ stepId: 'regions', type: 'for_each', status: 'RUNNING', items: 60, iteration: 34, ...over }) as StepState;

  it('from the state alone: done before the current one, its status at it, not reached after', () => {
    const s = iterationStatuses(loop({ status: 'FAILED' }), [], false);
    expect(s).toHaveLength(60);
    expect(s.slice(0, 34).every((x) => x === 'SUCCEEDED')).toBe(true);
    expect(s[34]).toBe('FAILED');
    expect(s.slice(35).every((x) => x === 'NOT_REACHED')).toBe(true);
    const waiting = iterationStatuses(
      loop({ steps: [{ stepId: 'ask', type: 'manual_approval', status: 'WAITING' }] as StepState['steps'] }),
      [],
      false,
    );
    expect(waiting[34]).toBe('WAITING');
    const done = iterationStatuses(loop({ status: 'SUCCEEDED', iteration: 60 }), [], false);
    expect(countByStatus(done).get('SUCCEEDED')).toBe(60);
  });

  it('from the whole log: an iteration whose step failed (the run went on by its onError) says FAILED', () => {
    const bars = [
      bar('ping', 1, 2, { loop: 'regions', iteration: 3, status: 'FAILED' }),
      bar('ping', 2, 3, { loop: 'regions', iteration: 4 }),
    ];
    const s = iterationStatuses(loop({ status: 'SUCCEEDED', iteration: 60 }), bars, true);
    expect(s[3]).toBe('FAILED');
    expect(s[4]).toBe('SUCCEEDED');
    // Without the log's word for it, the same bars are not trusted.
    expect(iterationStatuses(loop({ status: 'SUCCEEDED', iteration: 60 }), bars, false)[3]).toBe('SUCCEEDED');
  });

  it('pages the iterations of a status, 20 a page, from any offset to the page holding it', () => {
    const s = iterationStatuses(loop({ status: 'FAILED' }), [], false);
    const first = iterationPage(s, undefined, 0);
    expect(first.rows).toHaveLength(ITERATIONS_PAGE);
    expect(first.total).toBe(60);
    expect(iterationPage(s, undefined, 45)).toMatchObject({ from: 40, total: 60 });
    expect(iterationPage(s, undefined, 45).rows[0]).toEqual({ index: 40, status: 'NOT_REACHED' });
    expect(iterationPage(s, 'FAILED', 0).rows).toEqual([{ index: 34, status: 'FAILED' }]);
    expect(iterationPage(s, 'NOT_REACHED', 20)).toMatchObject({ from: 20, total: 25 });
    // Past the end: the last page, not an empty one.
    expect(iterationPage(s, undefined, 999).from).toBe(40);
    expect(iterationPage(s, 'CANCELLED', 0)).toEqual({ rows: [], total: 0, from: 0 });
  });
});
