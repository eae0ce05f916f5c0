import * as z from 'zod';
import type { Route } from '../../../../shared/http/route.ts';
import { CONSOLE_FUNCTIONS, consolePage, cursorErrors, read } from '../../../route-kinds.ts';

export const route = {
  method: 'GET',
  path: '/console/approvals',
  handler: CONSOLE_FUNCTIONS.read,
  summary: 'The approvals inbox: pending approvals I review (admins: `all=1`, every pending one)',
  tag: 'Console pages',
  auth: consolePage,
  grants: read,
  html: true,
  query: z.object({ all: z.enum(['1']).optional(), cursor: z.string().max(4096).optional() }),
  errors: cursorErrors,
} as const satisfies Route;
