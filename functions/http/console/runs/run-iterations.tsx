import { isContainerType } from '../../../../shared/engine/steps/index.ts';
import { duration, JsonValue, Status } from '../../../../shared/console/components.tsx';
import {
  countByStatus,
  ITERATION_STATUSES,
  ITERATIONS_PAGE,
  type IterationStatus,
  iterationPage,
  iterationStatuses,
} from '../../../../shared/console/run-iterations.ts';
import { type Bar, barMs, fromEvents } from '../../../../shared/console/run-timeline.ts';
import type { Execution, StepState } from '../../../../shared/domain/read-types.ts';
import type { IterationRead } from '../../../../shared/domain/run-iterations.ts';
import { type RunViewState, runUrl } from './run-url.ts';

// The run page's iteration browser (one per `for_each` the run entered): each iteration's status, a
// filter by status, pages of ITERATIONS_PAGE, and an "Iteration" field that opens one iteration's
// details (its nested steps' status, time and error, its item and result) read on its own: iteration
// 35 of 60 is a field away, never a walk through the run's events. Links and a GET form: no script.

const words = (s: IterationStatus) => (s === 'NOT_REACHED' ? 'not reached' : s.toLowerCase());
const StatusOf = ({ s }: { s: IterationStatus }) => (s === 'NOT_REACHED' ? <span class="muted">not reached</span> : <Status value={s} />);

type Props = { e: Execution; bars: readonly Bar[]; exact: boolean; view: RunViewState; read: IterationRead | undefined };

function Details({
  e,
  read,
  status,
}: {
  e: Execution;
  read: Extract<IterationRead, { found: true }>;
  status: IterationStatus | undefined;
}) {
  const steps = fromEvents(read.events, []);
  const now = e.finishedAt ?? Date.now();
  return (
    <section aria-labelledby="iteration" class="iteration-details">
      <h4 id="iteration">{`Iteration ${read.index + 1} of ${read.loop}`}</h4>
      <p>Status: {status ? <StatusOf s={status} /> : '—'}</p>
      {steps.length === 0 ? (
        <p class="muted">No step of this iteration has an event (not reached, or its steps were skipped).</p>
      ) : (
        <ul class="iteration-steps">
          {steps.map((b) => (
            <li key={`${b.stepId}-${b.start}`}>
              <a href={`#step-${b.stepId}`}>{b.stepId}</a> <Status value={b.status} />{' '}
              <span class="muted">{`${duration(barMs(b, now))}${b.end === undefined ? ' so far' : ''}`}</span>
              {b.error ? (
                <span class="run-error">
                  {' '}
                  <code>{b.error.code}</code> {b.error.message}
                </span>
              ) : null}
            </li>
          ))}
        </ul>
      )}
      {read.item ? (
        <>
          <p class="value-label">Item</p>
          <JsonValue value={read.item.value} label={`Item of iteration ${read.index + 1}`} />
        </>
      ) : null}
      <p class="value-label">Result (the output of the iteration's last step)</p>
      {read.result ? (
        <JsonValue value={read.result.value} label={`Result of iteration ${read.index + 1}`} />
      ) : (
        <p class="muted">None{status === 'SUCCEEDED' ? '' : ': an iteration has a result once it is done'}.</p>
      )}
    </section>
  );
}

function LoopBrowser({ e, loop, bars, exact, view, read }: Props & { loop: StepState }) {
  const mine = (view.loop ?? e.steps.find((s) => isContainerType(s.type))?.stepId) === loop.stepId;
  const here: RunViewState = { ...view, loop: loop.stepId, ...(mine ? {} : { status: undefined, from: undefined, iteration: undefined }) };
  const statuses = iterationStatuses(loop, bars, exact);
  const filter = ITERATION_STATUSES.find((s) => s === here.status);
  const page = iterationPage(statuses, filter, here.from ?? 0);
  const counts = countByStatus(statuses);
  const id = `iterations-${loop.stepId}`;
  const link = (change: Partial<RunViewState>) => runUrl(e.executionId, here, change, id);
  const shown = mine && read?.loop === loop.stepId ? read : undefined;
  return (
    <section aria-labelledby={id} class="iterations">
      <h3 id={id}>{`Iterations of ${loop.stepId} (${statuses.length})`}</h3>
      <nav aria-label={`Filter the iterations of ${loop.stepId} by status`} class="timeline-controls">
        <span>
          <a
            class={filter === undefined ? 'choice current' : 'choice'}
            href={link({ status: undefined, from: 0, iteration: undefined })}
            {...(filter === undefined ? { 'aria-current': 'true' } : {})}
          >
            {`All ${statuses.length}`}
          </a>
          {ITERATION_STATUSES.filter((s) => counts.has(s)).map((s) => (
            <a
              key={s}
              class={filter === s ? 'choice current' : 'choice'}
              href={link({ status: s, from: 0, iteration: undefined })}
              {...(filter === s ? { 'aria-current': 'true' } : {})}
            >
              {`${words(s)} ${counts.get(s)}`}
            </a>
          ))}
        </span>
      </nav>
      <form method="get" action={`/console/runs/${e.executionId}#iteration`} class="iteration-jump">
        <input type="hidden" name="loop" value={loop.stepId} />
        {here.time !== 'real' ? <input type="hidden" name="time" value={here.time} /> : null}
        {here.zoom !== 1 && here.time === 'real' ? <input type="hidden" name="zoom" value={String(here.zoom)} /> : null}
        <label>
          Iteration
          <input
            type="number"
            name="iteration"
            min={1}
            max={Math.max(1, statuses.length)}
            required
            value={shown ? String(shown.index + 1) : undefined}
          />
        </label>
        <button type="submit">Show iteration</button>
      </form>
      {page.total === 0 ? (
        <p class="muted">No iteration has this status.</p>
      ) : (
        <>
          <ol
            class="iteration-list"
            start={page.rows[0] ? page.rows[0].index + 1 : 1}
            aria-label={`Iterations of ${loop.stepId}${filter ? `, ${words(filter)}` : ''}`}
          >
            {page.rows.map((r) => (
              <li key={r.index} value={r.index + 1}>
                <a
                  href={runUrl(e.executionId, here, { iteration: r.index + 1 }, 'iteration')}
                  aria-label={`Iteration ${r.index + 1}: ${words(r.status)}`}
                >
                  {`#${r.index + 1}`}
                </a>{' '}
                <StatusOf s={r.status} />
              </li>
            ))}
          </ol>
          <p class="muted">
            {`${page.from + 1}–${page.from + page.rows.length} of ${page.total}${filter ? ` ${words(filter)}` : ''}. `}
            {page.from > 0 ? <a href={link({ from: page.from - ITERATIONS_PAGE })}>Previous iterations</a> : null}
            {page.from > 0 && page.from + ITERATIONS_PAGE < page.total ? ' · ' : null}
            {page.from + ITERATIONS_PAGE < page.total ? <a href={link({ from: page.from + ITERATIONS_PAGE })}>Next iterations</a> : null}
          </p>
        </>
      )}
      {shown && !shown.found ? (
        <p class="notice" id="iteration">
          {shown.why}
        </p>
      ) : null}
      {shown?.found ? <Details e={e} read={shown} status={statuses[shown.index]} /> : null}
    </section>
  );
}

/** The iteration browsers of the run's loops (none without a `for_each` entered). */
export function IterationsSection(props: Props) {
  const loops = props.e.steps.filter((s) => isContainerType(s.type) && s.items !== undefined);
  const read = props.read;
  const lost = read && !read.found && !loops.some((l) => l.stepId === read.loop) ? read.why : undefined;
  if (loops.length === 0 && !lost) return null;
  return (
    <section aria-labelledby="iterations">
      <h2 id="iterations">Iterations</h2>
      {lost ? (
        <p class="notice" id="iteration">
          {lost}
        </p>
      ) : null}
      {loops.map((l) => (
        <LoopBrowser key={l.stepId} {...props} loop={l} />
      ))}
    </section>
  );
}
