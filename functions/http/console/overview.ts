// GET /console: the overview. DynamoDB calls per page view, none a scan: the session's 3 reads (session,
// user, account); the runs of the last 24 hours: LIST_SHARDS Queries (keys only, the range by key) and
// one BatchGet of at most 100 runs' status fields; the pending approvals: the status listing's shards
// (max(16, LIST_SHARDS) and the listing of before the upgrade: 17 Queries, keys only) and one BatchGet
// of at most 50; one BatchGet of the names of the workflows shown (only when something is shown).
// With the default 4 list shards: 27 at most, in three rounds (session; runs and approvals at once; names).
// test/integration/console-runs-reads.test.ts counts them.
import { route } from './overview.route.ts';
import { consoleHttp } from '../../../shared/console/console-http.tsx';
import { pendingFor } from '../../../shared/domain/pending-for-me.ts';
import { runsOfLastDay, workflowNamesOf } from '../../../shared/domain/run-list.ts';
import { overviewPage, SHOWN } from './overview-view.tsx';

export const handler = consoleHttp(route, async ({ session }) => {
  const p = session.principal;
  const now = Date.now();
  const [day, pending] = await Promise.all([runsOfLastDay(p.accountId, now), pendingFor(p)]);
  const failed = day.rows.filter((r) => r.status === 'FAILED').slice(0, SHOWN);
  const approvals = pending.items.slice(0, SHOWN);
  const names = await workflowNamesOf(
    p.accountId,
    [...failed, ...approvals].map((x) => x.workflowId),
  );
  return overviewPage(session, { day, failed, approvals, moreApprovals: pending.items.length > SHOWN || pending.more, names, now });
});
