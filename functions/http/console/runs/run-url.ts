import type { Zoom } from '../../../../shared/console/timeline-scale.ts';
import type { TimeMode } from '../../../../shared/console/timeline.tsx';

/**
 * What the run page's address keeps of how it is viewed (no script needed: each control is a link or a
 * GET form that re-renders the page): the timeline's axis and zoom, and the iteration browser's loop,
 * status filter, page and the iteration opened.
 */
export type RunViewState = {
  time: TimeMode;
  zoom: Zoom;
  loop?: string | undefined;
  status?: string | undefined;
  from?: number | undefined;
  iteration?: number | undefined;
};

/** The run page's address with `state` changed by `change` (defaults left out), and a fragment. */
export function runUrl(executionId: string, state: RunViewState, change: Partial<RunViewState>, fragment?: string): string {
  const s = { ...state, ...change };
  const q = new URLSearchParams();
  if (s.time !== 'real') q.set('time', s.time);
  if (s.zoom !== 1 && s.time === 'real') q.set('zoom', String(s.zoom));
  if (s.loop !== undefined) q.set('loop', s.loop);
  if (s.status !== undefined) q.set('status', s.status);
  if (s.from !== undefined && s.from > 0) q.set('from', String(s.from));
  if (s.iteration !== undefined) q.set('iteration', String(s.iteration));
  const query = q.toString();
  return `/console/runs/${executionId}${query ? `?${query}` : ''}${fragment ? `#${fragment}` : ''}`;
}
