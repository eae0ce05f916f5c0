// GET /console/runs: the runs list. DynamoDB calls per page view, none a scan: the session's 3 reads
// (session, user, account), LIST_SHARDS Queries of the run listing (keys only, the time range in the key
// condition), one BatchGet of the rows (projected), one Query of the workflow filter's choices (ids and
// names), and a BatchGet of the names of workflows not among them (only then): 9 with the default 4
// shards, 10 at most. The live refresh asks for the list alone: no choices, the names by one BatchGet
// (9). test/integration/console-runs-reads.test.ts counts them.
import { route } from './list.route.ts';
import { consoleHttp } from '../../../../shared/console/console-http.tsx';
import { pageRunRows, workflowFilterChoices, workflowNamesOf } from '../../../../shared/domain/run-list.ts';
import { runsFragment, runsPage, type RunsView } from './list-view.tsx';

export const handler = consoleHttp(route, async ({ query, session, event }) => {
  const accountId = session.principal.accountId;
  const { limit, cursor, live, ...filters } = query;
  const refresh = event.headers['hx-request'] === 'true';
  const [runs, choices] = await Promise.all([
    pageRunRows(accountId, filters, limit, cursor),
    refresh ? undefined : workflowFilterChoices(accountId),
  ]);
  const known = new Map(choices?.items.map((c) => [c.workflowId, c.name]));
  const shown = [...runs.items.map((r) => r.workflowId), ...(filters.workflowId ? [filters.workflowId] : [])];
  const names = await workflowNamesOf(accountId, shown, known);
  const view: RunsView = {
    filters,
    limit,
    cursor,
    live: live !== '0',
    rows: runs.items,
    nextCursor: runs.nextCursor,
    names,
    now: Date.now(),
  };
  return refresh ? runsFragment(view) : runsPage(session, view, choices?.items ?? []);
});
