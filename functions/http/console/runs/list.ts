// GET /console/runs: the runs list. DynamoDB calls per page view, none a scan: the session's 3 reads
// (session, user, account), LIST_SHARDS Queries of the run listing (keys only, the time range in the key
// condition), one BatchGet of the rows (projected), one Query of the workflow filter's choices (ids and
// names), and a BatchGet of the names of workflows not among them (only then): 9 with the default 4
// shards, 10 at most. Filtered by status or trigger the listing is read in windows until the page is
// full, 3 at most, each LIST_SHARDS Queries and a BatchGet (shared/domain/run-list.ts pageRunRows):
// 20 at most. The live refresh asks for the list alone: no choices, the names by one BatchGet. A wrong
// filter or cursor reads no run: the form shows it (400). test/integration/console-runs-reads.test.ts counts them.
import { route } from './list.route.ts';
import { FILTER_FIELDS, RunsQuery } from './list.route.ts';
import { consoleHttp } from '../../../../shared/console/console-http.tsx';
import { AppError } from '../../../../shared/errors.ts';
import { pageRunRows, type RunFilters, workflowFilterChoices, workflowNamesOf } from '../../../../shared/domain/run-list.ts';
import { byField, type FormErrors, noErrors } from '../parts/labelled-field.tsx';
import { DEFAULT_LIMIT, runsFragment, runsPage, type RunsView } from './list-view.tsx';

export const handler = consoleHttp(route, async ({ query, session, event }) => {
  const accountId = session.principal.accountId;
  const refresh = event.headers['hx-request'] === 'true';
  const parsed = RunsQuery.safeParse(query);
  const given = parsed.success
    ? parsed.data
    : { ...validOf(query), limit: DEFAULT_LIMIT, live: query.live === '0' ? ('0' as const) : undefined };
  const { limit, cursor, live, ...filters } = { cursor: undefined, ...given };
  let errors: FormErrors = parsed.success ? noErrors : byField(wrong(query, parsed.error.issues), FILTER_FIELDS);
  const choicesRead = refresh ? undefined : workflowFilterChoices(accountId);
  let runs: Awaited<ReturnType<typeof pageRunRows>> | undefined;
  if (parsed.success) {
    try {
      runs = await pageRunRows(accountId, filters, limit, cursor);
    } catch (e) {
      if (!(e instanceof AppError && e.code === 'INVALID_CURSOR')) throw e;
      errors = {
        fields: {},
        form: ["The page's link (its cursor) is out of date or was changed: press Filter to start again from the newest runs."],
      };
    }
  }
  const choices = await choicesRead;
  const known = new Map(choices?.items.map((c) => [c.workflowId, c.name]));
  const rows = runs?.items ?? [];
  const shown = [...rows.map((r) => r.workflowId), ...(filters.workflowId ? [filters.workflowId] : [])];
  const names = await workflowNamesOf(accountId, shown, known);
  const view: RunsView = {
    filters,
    limit,
    cursor,
    live: live !== '0',
    rows,
    nextCursor: runs?.nextCursor ?? null,
    previous: runs?.previous,
    offset: runs?.offset ?? 0,
    more: runs?.more ?? false,
    errors,
    names,
    now: Date.now(),
  };
  return refresh ? runsFragment(view) : runsPage(session, view, choices?.items ?? []);
});

/** The filters of a wrong query that are right on their own: the form keeps showing them. */
function validOf(query: Record<string, string | undefined>): RunFilters {
  const out: Record<string, unknown> = {};
  for (const name of FILTER_FIELDS) {
    const r = RunsQuery.shape[name].safeParse(query[name]);
    if (r.success && r.data !== undefined) out[name] = r.data;
  }
  return out as RunFilters;
}

/** What a wrong choice is told (the schema's own message lists every value). */
const CHOICE: Record<string, string> = {
  status: 'not a status; choose one of the list',
  trigger: 'not a trigger; choose one of the list',
  limit: 'not a page size; from 1 to 100',
  live: 'not an updates setting (0: paused)',
};

/** The query's wrong parameters, each with the text given (a person sees what the link said). */
function wrong(query: Record<string, string | undefined>, issues: readonly { path: PropertyKey[]; message: string }[]) {
  return issues.map((i) => {
    const path = String(i.path[0] ?? '');
    const given = query[path];
    const message = CHOICE[path] ?? i.message;
    return { path, message: given === undefined || given === '' ? message : `“${given.slice(0, 60)}”: ${message}` };
  });
}
