import { renderToString } from 'preact-render-to-string';
import type { ConsoleSession } from '../../../../shared/console/auth.ts';
import { Table } from '../../../../shared/console/components.tsx';
import { CONSOLE_HEADERS, page } from '../../../../shared/console/render.tsx';
import { RelativeTime, runDuration, StatusMark, TriggerText } from '../../../../shared/console/runs-components.tsx';
import type { WorkflowName as Choice } from '../../../../shared/domain/read-types.ts';
import { isActive } from '../../../../shared/domain/run-list.ts';
import type { HttpResult } from '../../../../shared/http/context.ts';
import { Filters } from './list-filters.tsx';
import { DEFAULT_LIMIT, href, isFiltered, PATH, queryOf, type RunsView } from './list-parts.tsx';

export { DEFAULT_LIMIT, type RunsView } from './list-parts.tsx';
/** How often a list with an active run asks for itself again (htmx). */
export const LIVE_SECONDS = 3;

const count = (n: number) => n.toLocaleString('en');
const failed = (v: RunsView) => Object.keys(v.errors.fields).length > 0 || v.errors.form.length > 0;

/**
 * Which runs the page shows, and of how many: the total when the list's end is on this page ("31
 * runs", "Runs 26–31 of 31"), else "of more than N" (a further run is known: read one ahead); a
 * filtered page that read its bound of runs without filling says the next page looks further back.
 */
function Summary({ v }: { v: RunsView }) {
  if (v.rows.length === 0) return null;
  const first = v.offset + 1;
  const last = v.offset + v.rows.length;
  const runs = isFiltered(v.filters) ? 'matching runs' : 'runs';
  const text = !v.nextCursor
    ? v.offset === 0
      ? `${count(last)} ${last === 1 ? runs.replace('runs', 'run') : runs}`
      : `${runs[0]?.toUpperCase()}${runs.slice(1)} ${count(first)}–${count(last)} of ${count(last)}`
    : v.more
      ? `${runs[0]?.toUpperCase()}${runs.slice(1)} ${count(first)}–${count(last)} of more than ${count(last)}`
      : `${runs[0]?.toUpperCase()}${runs.slice(1)} ${count(first)}–${count(last)}; the next page looks further back`;
  return (
    <p class="runs-summary" id="runs-summary">
      {text}
    </p>
  );
}

/** Previous and Next: links (no script), the filters kept; "Newest runs" once the cursor no longer remembers the page before. */
function Pager({ v, q }: { v: RunsView; q: Record<string, string | undefined> }) {
  const prev = v.previous;
  if (!prev && !v.nextCursor) return null;
  return (
    <nav aria-label="Pages of runs" class="pager">
      {prev && 'cursor' in prev ? <a href={href({ ...q, cursor: prev.cursor })}>Previous page</a> : null}
      {prev && 'first' in prev ? <a href={href(q)}>Previous page</a> : null}
      {prev && 'newest' in prev ? <a href={href(q)}>Newest runs</a> : null}
      {v.nextCursor ? <a href={href({ ...q, cursor: v.nextCursor })}>Next page</a> : null}
    </nav>
  );
}

/** The table: the workflow's name first (the link to the run, its id beneath), the status mark, when, how long, how. */
function Rows({ v }: { v: RunsView }) {
  return (
    <div class="runs-table">
      <Table caption="Runs, newest first">
        <thead>
          <tr>
            <th scope="col">Workflow and run</th>
            <th scope="col">Status</th>
            <th scope="col">Started</th>
            <th scope="col" class="lesser">
              Duration
            </th>
            <th scope="col" class="lesser">
              Trigger
            </th>
          </tr>
        </thead>
        <tbody>
          {v.rows.map((r) => (
            <tr key={r.executionId}>
              <td>
                <a href={`/console/runs/${r.executionId}`} class="run-link">
                  <span class={v.names.has(r.workflowId) ? 'workflow-name' : 'workflow-name muted'}>
                    {v.names.get(r.workflowId) ?? r.workflowId}
                  </span>{' '}
                  <small class="run-id">{r.executionId}</small>
                </a>
              </td>
              <td>
                <StatusMark value={r.status} />
              </td>
              <td>
                <RelativeTime ms={r.startedAt} now={v.now} />
              </td>
              <td class="nowrap lesser">{runDuration(r, v.now)}</td>
              <td class="lesser">
                <TriggerText run={r} />
              </td>
            </tr>
          ))}
        </tbody>
      </Table>
    </div>
  );
}

/**
 * The part of the page that refreshes itself: while a listed run is active (and updates are not
 * paused) it asks for its own URL every few seconds and swaps itself for the answer's (htmx: `hx-get`,
 * `hx-select`, no script of ours, nothing evaluated). Once no listed run is active the answer has no
 * `hx-trigger` and the polling stops. "Pause updates" is a plain link to the same list with `live=0`.
 */
function Live({ v }: { v: RunsView }) {
  const q = queryOf(v);
  const polling = v.live && v.rows.some(isActive);
  const poll = polling
    ? {
        'hx-get': href({ ...q, cursor: v.cursor }),
        'hx-trigger': `every ${LIVE_SECONDS}s`,
        'hx-select': '#runs-live',
        'hx-target': 'this',
        'hx-swap': 'outerHTML',
      }
    : {};
  return (
    <div id="runs-live" {...poll}>
      {polling ? (
        <p class="live-note">
          <span>Updating every {LIVE_SECONDS} seconds while a listed run is active.</span>{' '}
          <a href={href({ ...q, cursor: v.cursor, live: '0' })}>Pause updates</a>
        </p>
      ) : v.live ? null : (
        <p class="live-note">
          <span>Updates paused.</span> <a href={href({ ...q, cursor: v.cursor })}>Resume updates</a>
        </p>
      )}
      <Summary v={v} />
      {v.rows.length === 0 ? (
        <p>
          {failed(v)
            ? 'No runs shown: change the filters above.'
            : v.nextCursor
              ? 'No matching runs in this stretch of the list; the next page looks further back.'
              : isFiltered(v.filters) || v.cursor
                ? 'No runs match these filters.'
                : 'No runs yet.'}
        </p>
      ) : (
        <Rows v={v} />
      )}
      <Pager v={v} q={{ ...q, live: v.live ? undefined : '0' }} />
    </div>
  );
}

/** The runs list: its filters (a GET form) and the list; 400 when the query is wrong (shown in the form). */
export const runsPage = (session: ConsoleSession, v: RunsView, choices: readonly Choice[]) =>
  page(
    { title: 'Runs', session, section: PATH, status: failed(v) ? 400 : 200 },
    <>
      <Filters v={v} choices={choices} />
      {isFiltered(v.filters) || failed(v) ? (
        <p>
          <a href={v.limit === DEFAULT_LIMIT ? PATH : href({ limit: String(v.limit) })}>Clear filters</a>
        </p>
      ) : null}
      <Live v={v} />
    </>,
  );

/** What the live refresh asks for (`HX-Request`): the list alone, without the document around it. */
export const runsFragment = (v: RunsView): HttpResult => ({
  statusCode: failed(v) ? 400 : 200,
  headers: { ...CONSOLE_HEADERS },
  body: renderToString(<Live v={v} />),
});
