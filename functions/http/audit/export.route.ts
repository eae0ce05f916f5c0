import type { Route } from '../../../shared/http/route.ts';
import { AuditFilters } from '../../../shared/schemas/audit.ts';
import { auditReaders, read, refuses } from '../../route-kinds.ts';

export const route = {
  method: 'GET',
  path: '/api/audit/export',
  handler: 'http/audit/export',
  summary: "The account's audit log as NDJSON: every matching entry the reader may see (a session, or a key with AUDIT_READ as its owner)",
  tag: 'Console',
  auth: auditReaders,
  grants: read,
  query: AuditFilters,
  ndjson:
    'Every matching entry (not a page), one JSON object a line, newest first; at most 10,000 lines or 5 MB, then a last line `{"truncated":true}`',
  errors: [...refuses(403, 'AUDIT_OWN_ONLY')],
} as const satisfies Route;
