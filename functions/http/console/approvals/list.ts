// GET /console/approvals: the approvals inbox.
import { route } from './list.route.ts';
import { consoleHttp } from '../../../../shared/console/console-http.tsx';
import { factsOf } from '../../../../shared/domain/approval-console.ts';
import { inboxPage } from '../../../../shared/domain/approval-inbox.ts';
import { forbidden } from '../../../../shared/errors.ts';
import { BULK_OUTCOMES } from '../../../../shared/schemas/approvals.ts';
import { approvalsPage, type Summary } from './list-view.tsx';

export const handler = consoleHttp(route, async ({ session, query }) => {
  const p = session.principal;
  const all = query.all === '1';
  const sort = query.sort ?? 'oldest';
  // The server decides what a member sees, whatever the address asks for.
  if (all && p.role !== 'admin') throw forbidden('ADMIN_ONLY', 'Only account admins see every pending approval.');
  const page = await inboxPage(p, { all, sort, cursor: query.cursor });
  const facts = await factsOf(p.accountId, {
    executionIds: page.items.map((a) => a.executionId),
    workflowIds: page.items.map((a) => a.workflowId),
  });
  // An approval whose run was interrupted waits for the run's resume, not for a reviewer: it leaves
  // "waiting for you" (a page may show fewer rows); admins' "all pending" marks it.
  const items = all ? page.items : page.items.filter((a) => facts.runs.get(a.executionId)?.status !== 'INTERRUPTED');
  // The navigation's count leaves them out too (those the reader could decide, among the rows read).
  const interrupted = page.items.filter((a) => a.mine && !a.voted && facts.runs.get(a.executionId)?.status === 'INTERRUPTED').length;
  const waiting = page.waiting ? { ...page.waiting, count: Math.max(0, page.waiting.count - interrupted) } : undefined;
  const summary: Summary | undefined =
    query.done === '1' ? (Object.fromEntries(BULK_OUTCOMES.map((o) => [o, Number(query[o] ?? 0)])) as Summary) : undefined;
  return approvalsPage(session, {
    items,
    nextCursor: page.nextCursor,
    more: page.more,
    all,
    sort,
    facts,
    now: Date.now(),
    waiting,
    summary,
  });
});
