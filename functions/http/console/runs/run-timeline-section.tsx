import type { Bar } from '../../../../shared/console/run-timeline.ts';
import { TimelineSvg, TimelineTable } from '../../../../shared/console/timeline.tsx';
import { ZOOMS } from '../../../../shared/console/timeline-scale.ts';
import type { Execution } from '../../../../shared/domain/read-types.ts';
import { type RunViewState, runUrl } from './run-url.ts';

/** A link of a choice: the current one is marked (`aria-current`), and still a link (it reloads the same view). */
function Choice({ href, current, children }: { href: string; current: boolean; children: string }) {
  return (
    <a href={href} class={current ? 'choice current' : 'choice'} {...(current ? { 'aria-current': 'true' } : {})}>
      {children}
    </a>
  );
}

/**
 * The run's timeline: on a real-time axis by default (every bar at its true length; zoom 1× to 8×), or
 * compressed (waits drawn at a fixed width, their duration written on them), chosen by links that keep
 * the choice in the address; then the same rows as a table.
 */
export function TimelineSection({
  e,
  bars,
  fromStates,
  view,
  now,
}: {
  e: Execution;
  bars: readonly Bar[];
  fromStates: boolean;
  view: RunViewState;
  now: number;
}) {
  const end = e.finishedAt ?? now;
  const real = view.time === 'real';
  return (
    <section aria-labelledby="timeline">
      <h2 id="timeline">Timeline</h2>
      {bars.length === 0 ? (
        <p>No step has started yet.</p>
      ) : (
        <>
          <div class="timeline-controls">
            <nav aria-label="Time axis">
              <span class="muted">Time axis: </span>
              <Choice href={runUrl(e.executionId, view, { time: 'real' }, 'timeline')} current={real}>
                Real time
              </Choice>
              <Choice href={runUrl(e.executionId, view, { time: 'compressed' }, 'timeline')} current={!real}>
                Compressed
              </Choice>
            </nav>
            {real ? (
              <nav aria-label="Zoom">
                <span class="muted">Zoom: </span>
                {ZOOMS.map((z) => (
                  <Choice key={z} href={runUrl(e.executionId, view, { zoom: z }, 'timeline')} current={view.zoom === z}>
                    {`${z}×`}
                  </Choice>
                ))}
              </nav>
            ) : null}
          </div>
          <TimelineSvg
            bars={bars}
            start={e.startedAt}
            end={end}
            now={now}
            mode={view.time}
            zoom={view.zoom}
            label={`Timeline of run ${e.executionId} (${real ? `real time${view.zoom > 1 ? `, zoom ${view.zoom}×` : ''}` : 'compressed'}): ${bars.length} step executions`}
          />
          {fromStates ? (
            <p class="muted">The run's log is long: the timeline shows each step's last execution (a loop's current iteration).</p>
          ) : null}
          <p class="muted">
            {real
              ? 'Real time: each bar and wait is drawn at its true length from the run’s start; a step too short to see at this zoom is a thin tick with its duration written beside it.'
              : 'Compressed: waits (approvals, callbacks, delays, retry backoffs) and idle time of a second or more are drawn at a fixed width, their duration written on them; lengths are not to scale.'}
          </p>
          <TimelineTable bars={bars} start={e.startedAt} now={now} caption="The timeline's steps" />
        </>
      )}
    </section>
  );
}
