import type { Route } from '../../../shared/http/route.ts';
import { AuditList, AuditListQuery } from '../../../shared/schemas/audit.ts';
import { auditReaders, cursorErrors, read, refuses } from '../../route-kinds.ts';

export const route = {
  method: 'GET',
  path: '/api/audit',
  handler: 'http/audit/list',
  summary: "The account's audit log, a page: admins read every entry, members their own (a session, or a key with AUDIT_READ as its owner)",
  tag: 'Console',
  auth: auditReaders,
  grants: read,
  query: AuditListQuery,
  response: AuditList,
  ndjsonByAccept:
    'Deprecated (use `GET /api/audit/export`): with `Accept: application/x-ndjson`, the export `GET /api/audit/export` answers for the same filters',
  errors: [...cursorErrors, ...refuses(403, 'AUDIT_OWN_ONLY')],
} as const satisfies Route;
