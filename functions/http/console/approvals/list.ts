// GET /console/approvals: the approvals inbox.
import { route } from './list.route.ts';
import { consoleHttp } from '../../../../shared/console/console-http.tsx';
import { factsOf } from '../../../../shared/domain/approval-console.ts';
import { pageApprovals } from '../../../../shared/domain/approval-reads.ts';
import { forbidden } from '../../../../shared/errors.ts';
import { approvalsPage } from './list-view.tsx';

/** Rows a page shows. */
const PAGE_SIZE = 25;

export const handler = consoleHttp(route, async ({ session, query }) => {
  const p = session.principal;
  const all = query.all === '1';
  // The server decides what a member sees, whatever the address asks for.
  if (all && p.role !== 'admin') throw forbidden('ADMIN_ONLY', 'Only account admins see every pending approval.');
  const page = await pageApprovals(p, 'PENDING', PAGE_SIZE, query.cursor, { all });
  const facts = await factsOf(p.accountId, {
    executionIds: page.items.map((a) => a.executionId),
    workflowIds: page.items.map((a) => a.workflowId),
  });
  // An approval whose run was interrupted waits for the run's resume, not for a reviewer: it leaves
  // "waiting for you" (a page may show fewer rows); admins' "all pending" marks it.
  const items = all ? page.items : page.items.filter((a) => facts.runs.get(a.executionId)?.status !== 'INTERRUPTED');
  return approvalsPage(session, { items, nextCursor: page.nextCursor, all, facts, now: Date.now() });
});
