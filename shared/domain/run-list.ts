import type { ExecutionStatus } from '../db/entities/execution-state.ts';
import { IN_PROGRESS } from '../db/entities/execution-state.ts';
import { positionAfter, type RunRow, runWindow } from '../db/entities/execution-rows.ts';
import { workflowChoices, workflowNames } from '../db/entities/workflow-names.ts';
import { decodeCursor, encodeCursor } from '../db/cursor.ts';

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
 * Runs read per page when the page is filtered by status or trigger, which the listings' keys do not
 * hold: one BatchGet's most, so that sparse matches still fill pages at the same number of calls.
 */
export const FILTERED_WINDOW = 100;

/**
 * A page of runs, newest first: at most `limit` rows matching `f`, and the cursor of the page after
 * (null: none). DynamoDB calls: LIST_SHARDS Queries (keys only, in parallel, in the time range) and one
 * BatchGet (the rows' fields). Filtered by status or trigger it reads a window of `FILTERED_WINDOW`
 * runs and keeps the matches; past `limit` of them the cursor points just after the last one shown, so
 * nothing is skipped. A page may then be short, even empty with a "Next page" (no match in its window).
 */
export async function pageRunRows(accountId: string, f: RunFilters, limit: number, cursor: string | undefined) {
  const binding = `console-runs:${JSON.stringify([accountId, f.workflowId ?? '', f.status ?? '', f.trigger ?? '', f.from ?? '', f.to ?? ''])}`;
  const filtered = f.status !== undefined || f.trigger !== undefined;
  const w = await runWindow(accountId, f, filtered ? Math.max(limit, FILTERED_WINDOW) : limit, decodeCursor(cursor, binding));
  const keep = matches(f);
  const items: RunRow[] = [];
  let next = w.next;
  for (const [i, e] of w.entries.entries()) {
    if (!e.row || !keep(e.row)) continue;
    if (items.length === limit) {
      next = positionAfter(w.start, w.shards, w.entries, i - 1);
      break;
    }
    items.push(e.row);
  }
  return { items, nextCursor: encodeCursor(next, binding) };
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
