import * as z from 'zod';
import type { Route } from '../../../../../shared/http/route.ts';
import { CONSOLE_FUNCTIONS, consolePage, cursorErrors, read } from '../../../../route-kinds.ts';

/**
 * The audit page's filters, as typed: checked by the handler with the API's own schema, so a bad
 * value is shown at its field (not a bare 400 page). Other parameters are ignored.
 */
export const AuditPageQuery = z.object({
  actor: z.string().max(200).optional(),
  action: z.string().max(200).optional(),
  objectType: z.string().max(200).optional(),
  objectId: z.string().max(200).optional(),
  from: z.string().max(200).optional(),
  to: z.string().max(200).optional(),
  cursor: z.string().max(4096).optional(),
});

export const route = {
  method: 'GET',
  path: '/console/audit',
  handler: CONSOLE_FUNCTIONS.read,
  summary: "The account's audit log: filtered by actor, action, object and time, newest first, paged",
  tag: 'Console pages',
  auth: consolePage,
  grants: read,
  html: true,
  query: AuditPageQuery,
  errors: [...cursorErrors],
} as const satisfies Route;
