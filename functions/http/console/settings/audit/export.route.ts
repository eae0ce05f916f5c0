import type { Route } from '../../../../../shared/http/route.ts';
import { CONSOLE_FUNCTIONS, consolePage, read } from '../../../../route-kinds.ts';
import { AuditPageQuery } from './list.route.ts';

export const route = {
  method: 'GET',
  path: '/console/audit/export',
  handler: CONSOLE_FUNCTIONS.read,
  summary: "The audit log's matching entries as NDJSON (what GET /api/audit answers to Accept: application/x-ndjson)",
  tag: 'Console pages',
  auth: consolePage,
  grants: read,
  html: true,
  query: AuditPageQuery,
} as const satisfies Route;
