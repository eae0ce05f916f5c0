// GET /console/audit: the audit log, filtered (a GET form: a filtered view can be bookmarked), newest
// first, a cursor page at a time. Admins see every entry and may filter by member; members see their own.
import { route } from './list.route.ts';
import { consoleHttp } from '../../../../../shared/console/console-http.tsx';
import { pageAudit } from '../../../../../shared/domain/audit.ts';
import { listMembers } from '../../../../../shared/domain/members.ts';
import { auditFilters } from './filters.ts';
import { AUDIT_PAGE, auditPage } from './list-view.tsx';

export const handler = consoleHttp(route, async ({ session, query }) => {
  const { cursor, ...form } = query;
  const p = session.principal;
  const members = p.role === 'admin' ? (await listMembers(p)).items : [];
  const checked = auditFilters(form);
  if (checked.errors) return auditPage(session, { form, members, errors: checked.errors, entries: [], nextCursor: null, status: 400 });
  // For people: the newest entries at once (a program following the log reads the API, which waits for them to settle).
  const page = await pageAudit(p, checked.filters, AUDIT_PAGE, cursor, { settled: false });
  return auditPage(session, { form, members, entries: page.items, nextCursor: page.nextCursor, cursor });
});
