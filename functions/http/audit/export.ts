// GET /api/audit/export: every matching entry of the audit log as NDJSON.
import { route } from './export.route.ts';
import { http } from '../../../shared/http/handler.ts';
import { ndjsonOk } from '../../../shared/http/responses.ts';
import { auditReader, exportAudit, ndjson } from '../../../shared/domain/audit.ts';

export const handler = http(route, async ({ principal, query }) =>
  ndjsonOk(ndjson(await exportAudit(await auditReader(principal), query))),
);
