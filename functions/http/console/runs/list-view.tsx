import { renderToString } from 'preact-render-to-string';
import type { ConsoleSession } from '../../../../shared/console/auth.ts';
import { NextPage, RunLink, Status, Table } from '../../../../shared/console/components.tsx';
import { CONSOLE_HEADERS, page } from '../../../../shared/console/render.tsx';
import { runDuration, ShortTime, STATUS_ORDER, TriggerText, WorkflowName } from '../../../../shared/console/runs-components.tsx';
import type { RunRow, WorkflowName as Choice } from '../../../../shared/domain/read-types.ts';
import { isActive, RUN_TRIGGERS, type RunFilters } from '../../../../shared/domain/run-list.ts';
import type { HttpResult } from '../../../../shared/http/context.ts';

const PATH = '/console/runs';
export const DEFAULT_LIMIT = 25;
/** How often a list with an active run asks for itself again (htmx). */
export const LIVE_SECONDS = 3;

export type RunsView = {
  filters: RunFilters;
  limit: number;
  cursor: string | undefined;
  live: boolean;
  rows: RunRow[];
  nextCursor: string | null;
  names: ReadonlyMap<string, string>;
  now: number;
};

const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString());
/** A time as a `datetime-local` field holds it (UTC, no zone; seconds and milliseconds only when not zero). */
const fieldTime = (ms: number | undefined) => {
  if (ms === undefined) return '';
  const s = new Date(ms).toISOString().slice(0, 23);
  return s.endsWith(':00.000') ? s.slice(0, 16) : s.endsWith('.000') ? s.slice(0, 19) : s;
};

/** The list's query as parameters (the filters as given, the page size when not the default). */
const queryOf = (v: Pick<RunsView, 'filters' | 'limit'>): Record<string, string | undefined> => ({
  workflowId: v.filters.workflowId,
  status: v.filters.status,
  trigger: v.filters.trigger,
  from: iso(v.filters.from),
  to: iso(v.filters.to),
  limit: v.limit === DEFAULT_LIMIT ? undefined : String(v.limit),
});
const href = (q: Record<string, string | undefined>) => {
  const params = new URLSearchParams(Object.entries(q).filter((e): e is [string, string] => e[1] !== undefined && e[1] !== ''));
  return params.size ? `${PATH}?${params}` : PATH;
};

const isFiltered = (f: RunFilters) => Object.values(f).some((x) => x !== undefined);

function Filters({ v, choices }: { v: RunsView; choices: readonly Choice[] }) {
  const f = v.filters;
  const listed = f.workflowId === undefined || choices.some((c) => c.workflowId === f.workflowId);
  return (
    <form method="get" action={PATH} class="filters runs-filters" aria-label="Filter runs">
      <label>
        Workflow
        <select name="workflowId">
          <option value="">All workflows</option>
          {choices.map((c) => (
            <option key={c.workflowId} value={c.workflowId} selected={c.workflowId === f.workflowId}>
              {c.name}
            </option>
          ))}
          {listed ? null : (
            <option value={f.workflowId} selected>
              {v.names.get(f.workflowId as string) ?? f.workflowId}
            </option>
          )}
        </select>
      </label>
      <label>
        Status
        <select name="status">
          <option value="">Any status</option>
          {STATUS_ORDER.map((s) => (
            <option key={s} value={s} selected={s === f.status}>
              {s}
            </option>
          ))}
        </select>
      </label>
      <label>
        Trigger
        <select name="trigger">
          <option value="">Any trigger</option>
          {RUN_TRIGGERS.map((t) => (
            <option key={t} value={t} selected={t === f.trigger}>
              {t}
            </option>
          ))}
        </select>
      </label>
      <label class="when">
        From (UTC)
        <input type="datetime-local" name="from" step="any" value={fieldTime(f.from)} />
      </label>
      <label class="when">
        To (UTC)
        <input type="datetime-local" name="to" step="any" value={fieldTime(f.to)} />
      </label>
      {v.limit === DEFAULT_LIMIT ? null : <input type="hidden" name="limit" value={String(v.limit)} />}
      {v.live ? null : <input type="hidden" name="live" value="0" />}
      <button type="submit">Filter</button>
    </form>
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
  const filtered = isFiltered(v.filters);
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
      {v.rows.length === 0 ? (
        <p>
          {v.nextCursor
            ? 'No matching runs in this stretch of the list; the next page looks further back.'
            : filtered || v.cursor
              ? 'No runs match these filters.'
              : 'No runs yet.'}
        </p>
      ) : (
        <div class="runs-table">
          <Table caption="Runs, newest first">
            <thead>
              <tr>
                <th scope="col">Run</th>
                <th scope="col">Workflow</th>
                <th scope="col">Status</th>
                <th scope="col">Trigger</th>
                <th scope="col">Started</th>
                <th scope="col">Duration</th>
              </tr>
            </thead>
            <tbody>
              {v.rows.map((r) => (
                <tr key={r.executionId}>
                  <td>
                    <RunLink id={r.executionId} />
                  </td>
                  <td>
                    <WorkflowName id={r.workflowId} names={v.names} />
                  </td>
                  <td>
                    <Status value={r.status} />
                  </td>
                  <td>
                    <TriggerText run={r} />
                  </td>
                  <td>
                    <ShortTime ms={r.startedAt} />
                  </td>
                  <td class="nowrap">{runDuration(r, v.now)}</td>
                </tr>
              ))}
            </tbody>
          </Table>
        </div>
      )}
      <NextPage path={PATH} query={{ ...q, live: v.live ? undefined : '0' }} cursor={v.nextCursor} />
    </div>
  );
}

/** The runs list: its filters (a GET form) and the list. */
export const runsPage = (session: ConsoleSession, v: RunsView, choices: readonly Choice[]) =>
  page(
    { title: 'Runs', session, section: PATH },
    <>
      <Filters v={v} choices={choices} />
      {isFiltered(v.filters) ? (
        <p>
          <a href={v.limit === DEFAULT_LIMIT ? PATH : href({ limit: String(v.limit) })}>Clear filters</a>
        </p>
      ) : null}
      <Live v={v} />
    </>,
  );

/** What the live refresh asks for (`HX-Request`): the list alone, without the document around it. */
export const runsFragment = (v: RunsView): HttpResult => ({
  statusCode: 200,
  headers: { ...CONSOLE_HEADERS },
  body: renderToString(<Live v={v} />),
});
