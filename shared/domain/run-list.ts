import type { ExecutionStatus } from '../db/entities/execution-state.ts';
import { IN_PROGRESS } from '../db/entities/execution-state.ts';
import { type RunRow, runWindow } from '../db/entities/execution-rows.ts';
import { workflowChoices, workflowNames } from '../db/entities/workflow-names.ts';
import { nextCursor as nextCursorOf, positionOf, previousOf, readListCursor } from './run-list-cursor.ts';

// The console's runs list and the overview's figures: windows of the run listings (keys only, write-
// sharded; shared/db/entities/execution-rows.ts), a time range read by the key condition, and what the
// listing's keys do not hold (status, trigger) filtered on the rows read.

/**
 * The triggers a person filters by. A run's `trigger` is how it started (webhook, api, schedule,
 * rerun: a new run of another's inputs); a retry re-enters the same run (`retries` counts them), so
 * `retry` lists the runs retried at least once.
 */
export const RUN_TRIGGERS = ['webhook', 'api', 'schedule', 'retry', 'rerun'] as const;
export type RunTrigger = (typeof RUN_TRIGGERS)[number];

export type RunFilters = {
  workflowId?: string | undefined;
  status?: ExecutionStatus | undefined;
  trigger?: RunTrigger | undefined;
  /** Created from, to (milliseconds, inclusive). */
  from?: number | undefined;
  to?: number | undefined;
};

/** A run in one of these states may still change: a list showing one refreshes itself. */
export const isActive = (r: Pick<RunRow, 'status'>) => IN_PROGRESS.includes(r.status);

const matches = (f: RunFilters) => (r: RunRow) =>
  (!f.status || r.status === f.status) && (!f.trigger || (f.trigger === 'retry' ? (r.retries ?? 0) > 0 : r.trigger === f.trigger));

/**
 * Runs read per window when the page is filtered by status or trigger, which the listings' keys do not
 * hold: one BatchGet's most.
 */
export const FILTERED_WINDOW = 100;
/**
 * Windows a filtered page reads at most to fill itself (`FILTERED_WINDOWS` × `FILTERED_WINDOW` runs
 * looked at): a page with fewer matches in that stretch is shown short, saying the next page looks
 * further back. Why not an index by status (docs/console.md "What the lists read"): the listings are
 * keys only; status in a key or a projection would rewrite both listing entries at every change of a
 * run's status (write units on every run), where this reads only when a person filters.
 */
export const FILTERED_WINDOWS = 3;

export type RunPage = {
  items: RunRow[];
  /** The next page's cursor (null: none). */
  nextCursor: string | null;
  /** Where "Previous page" goes (undefined: this is the first page). */
  previous: ReturnType<typeof previousOf>;
  /** Rows shown on the pages before this one. */
  offset: number;
  /** Another run (matching, when filtered) is known to come after this page. */
  more: boolean;
};

/**
 * A page of runs, newest first: at most `limit` rows matching `f`, and the cursors both ways.
 * DynamoDB calls: unfiltered (a workflow and a time range are keys, not filters), LIST_SHARDS Queries
 * (keys only, in parallel, in the time range) and one BatchGet of the rows' fields. Filtered by status
 * or trigger, windows of `FILTERED_WINDOW` runs (the same calls each) until it has `limit` matches and
 * one more (so it knows there are more), at most `windows` of them: (LIST_SHARDS + 1) × `windows`
 * calls at most, 15 with the defaults. A page cut at `limit` goes on just after its last row read, so
 * nothing is skipped; one cut by the bound goes on after the last run looked at.
 */
export async function pageRunRows(accountId: string, f: RunFilters, limit: number, cursor: string | undefined, windows = FILTERED_WINDOWS) {
  const binding = `console-runs:${JSON.stringify([accountId, f.workflowId ?? '', f.status ?? '', f.trigger ?? '', f.from ?? '', f.to ?? ''])}`;
  const at = readListCursor(cursor, binding);
  const filtered = f.status !== undefined || f.trigger !== undefined;
  const keep = matches(f);
  const items: RunRow[] = [];
  let start: Record<string, unknown> | undefined = positionOf(at);
  let last = at?.a;
  let more = false;
  let end = false;
  for (let read = 0; read < (filtered ? windows : 1) && !more && !end; read++) {
    const w = await runWindow(accountId, f, filtered ? Math.max(limit, FILTERED_WINDOW) : limit, start);
    for (const e of w.entries) {
      if (e.row && keep(e.row)) {
        if (items.length === limit) {
          more = true;
          break;
        }
        items.push(e.row);
      }
      last = e.sk;
    }
    if (!w.next) end = !more;
    else start = { p: [], d: [], l: last ?? null };
    if (!filtered && w.next) more = true;
  }
  const nextCursor = end || last === undefined ? null : nextCursorOf(at, items.length, last, binding);
  return { items, nextCursor, previous: previousOf(at, binding), offset: at?.o ?? 0, more } satisfies RunPage;
}

/** Runs the overview counts: the newest this many of the last 24 hours (one window: LIST_SHARDS Queries and a BatchGet). */
export const OVERVIEW_RUNS = 100;
const DAY_MS = 86_400_000;

/**
 * The account's runs created in the 24 hours before `now`, newest first, at most `OVERVIEW_RUNS`
 * (`more`: there were others, older, in those hours).
 */
export async function runsOfLastDay(accountId: string, now = Date.now()) {
  const w = await runWindow(accountId, { from: now - DAY_MS, to: now }, OVERVIEW_RUNS);
  return { since: now - DAY_MS, rows: w.entries.flatMap((e) => (e.row ? [e.row] : [])), more: w.next !== undefined };
}

/** Workflows the runs list's filter offers: the account's newest this many (one Query, ids and names only). */
export const WORKFLOW_CHOICES = 100;
export const workflowFilterChoices = (accountId: string) => workflowChoices(accountId, WORKFLOW_CHOICES);

/**
 * The names of `ids` (workflows of runs shown): those in `known` as they are, the others read (one
 * BatchGet of ids and names, none when every one is known). An id of no workflow of the account (gone,
 * another account's) has none: lists show the id.
 */
export async function workflowNamesOf(accountId: string, ids: Iterable<string>, known: ReadonlyMap<string, string> = new Map()) {
  const missing = [...new Set(ids)].filter((id) => !known.has(id)).slice(0, 100);
  return missing.length === 0 ? known : new Map([...known, ...(await workflowNames(accountId, missing))]);
}
