import type { Route } from '../../../shared/http/route.ts';
import { AuditList, AuditListQuery } from '../../../shared/schemas/audit.ts';
import { cursorErrors, read, refuses, session } from '../../route-kinds.ts';

export const route = {
  method: 'GET',
  path: '/api/audit',
  handler: 'http/audit/list',
  summary: "The account's audit log: admins read every entry, members their own",
  tag: 'Console',
  auth: session,
  grants: read,
  query: AuditListQuery,
  response: AuditList,
  ndjson:
    'With `Accept: application/x-ndjson`: every matching entry (not a page), one JSON object a line, newest first; at most 10,000 lines or 5 MB, then a last line `{"truncated":true}`',
  errors: [...cursorErrors, ...refuses(403, 'AUDIT_OWN_ONLY')],
} as const satisfies Route;
