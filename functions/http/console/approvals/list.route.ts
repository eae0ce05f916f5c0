import * as z from 'zod';
import type { Route } from '../../../../shared/http/route.ts';
import { INBOX_SORTS } from '../../../../shared/schemas/approvals.ts';
import { CONSOLE_FUNCTIONS, consolePage, cursorErrors, read } from '../../../route-kinds.ts';

/** A count of the summary a bulk decision redirects with (`?done=1&approved=2&handled=1`: BULK_OUTCOMES). */
const Count = z
  .string()
  .regex(/^\d{1,3}$/)
  .optional();

export const route = {
  method: 'GET',
  path: '/console/approvals',
  handler: CONSOLE_FUNCTIONS.read,
  summary:
    'The approvals inbox: pending approvals I review (admins: `all=1`, every pending one), oldest first or deadline soonest (`sort=deadline`); after a bulk decision, its summary',
  tag: 'Console pages',
  auth: consolePage,
  grants: read,
  html: true,
  query: z.object({
    all: z.enum(['1']).optional(),
    cursor: z.string().max(4096).optional(),
    sort: z.enum(INBOX_SORTS).optional(),
    done: z.enum(['1']).optional(),
    approved: Count,
    voted: Count,
    rejected: Count,
    handled: Count,
    refused: Count,
    needsform: Count,
    failed: Count,
  }),
  errors: cursorErrors,
} as const satisfies Route;
