// GET /console/audit/export: the page's filters, every matching entry as NDJSON (the session cookie is
// no API credential, so the console answers the export itself, from the same domain function).
import { route } from './export.route.ts';
import { consoleHttp } from '../../../../../shared/console/console-http.tsx';
import { exportAudit, ndjson } from '../../../../../shared/domain/audit.ts';
import { validationFailed } from '../../../../../shared/errors.ts';
import { auditFilters } from './filters.ts';

export const handler = consoleHttp(route, async ({ session, query }) => {
  const { cursor: _, ...form } = query;
  const checked = auditFilters(form);
  if (checked.errors) throw validationFailed(checked.errors);
  return {
    statusCode: 200,
    headers: {
      'content-type': 'application/x-ndjson',
      'content-disposition': 'attachment; filename="audit.ndjson"',
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
    },
    body: ndjson(await exportAudit(session.principal, checked.filters)),
  };
});
