// GET /console: the overview. DynamoDB calls per page view, none a scan: the session's 3 reads (session,
// user, account); the runs counted per hour: one Query of the account's hour items (24 or 168 small
// items: one page, two at most); the last failed runs of the span: LIST_SHARDS Queries (keys only, the
// range by key) and one BatchGet of at most 100 runs' fields; the pending approvals: the status
// listing's shards (max(16, LIST_SHARDS) and the listing of before the upgrade: 17 Queries, keys only)
// and one BatchGet of at most 50; one BatchGet of the names of the workflows shown and of the pending
// approvals' runs (their status: an interrupted run's approval is not waiting for anyone; only when
// something is shown or pending). With the default 4 list shards: 28 at most, in three rounds (session; counts, runs and
// approvals at once; names). test/integration/console-runs-reads.test.ts counts them.
import { route } from './overview.route.ts';
import { consoleHttp } from '../../../shared/console/console-http.tsx';
import { pendingFor } from '../../../shared/domain/pending-for-me.ts';
import { runOverview, spanStart } from '../../../shared/domain/run-overview.ts';
import { factsOf } from '../../../shared/domain/approval-console.ts';
import { pageRunRows } from '../../../shared/domain/run-list.ts';
import { overviewPage, SHOWN } from './overview-view.tsx';

export const handler = consoleHttp(route, async ({ session, query }) => {
  const p = session.principal;
  const now = Date.now();
  const [runs, failedPage, pending] = await Promise.all([
    runOverview(p.accountId, query.span, now),
    pageRunRows(p.accountId, { status: 'FAILED', from: spanStart(query.span, now) }, SHOWN, undefined, 1),
    pendingFor(p),
  ]);
  const failed = failedPage.items;
  // The workflows' names and the pending approvals' runs, in one BatchGet: an approval whose run was
  // interrupted waits for the run's resume, not for a reviewer, so it is neither listed nor counted (as in the inbox).
  const facts = await factsOf(p.accountId, {
    executionIds: pending.items.map((a) => a.executionId),
    workflowIds: [...failed, ...pending.items].map((x) => x.workflowId),
  });
  const waitingForMe = pending.items.filter((a) => facts.runs.get(a.executionId)?.status !== 'INTERRUPTED');
  const approvals = waitingForMe.slice(0, SHOWN);
  const names = facts.workflows;
  return overviewPage(session, {
    runs,
    failed,
    approvals,
    moreApprovals: waitingForMe.length > SHOWN || pending.more,
    pending: pending.pending,
    morePending: pending.more,
    waiting: { count: waitingForMe.length, more: pending.more },
    names,
    now,
  });
});
