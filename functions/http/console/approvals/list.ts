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
  return approvalsPage(session, { items: page.items, nextCursor: page.nextCursor, all, facts, now: Date.now() });
});
