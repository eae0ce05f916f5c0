// GET /api/audit: a JSON page; with `Accept: application/x-ndjson` (deprecated, kept for its callers) the export.
import { route } from './list.route.ts';
import { http } from '../../../shared/http/handler.ts';
import { ndjsonOk, ok } from '../../../shared/http/responses.ts';
import { auditReader, exportAudit, ndjson, pageAudit, wantsNdjson } from '../../../shared/domain/audit.ts';

export const handler = http(route, async ({ principal, query, event }) => {
  const { limit, cursor, ...filters } = query;
  const reader = await auditReader(principal);
  if (wantsNdjson(event.headers.accept)) return ndjsonOk(ndjson(await exportAudit(reader, filters)));
  return ok(await pageAudit(reader, filters, limit, cursor));
});
