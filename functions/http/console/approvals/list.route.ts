import * as z from 'zod';
import type { Route } from '../../../../shared/http/route.ts';
import { consolePage, cursorErrors, read } from '../../../route-kinds.ts';

export const route = {
  method: 'GET',
  path: '/console/approvals',
  handler: 'http/console/approvals/list',
  summary: 'The approvals inbox: pending approvals I review (admins: `all=1`, every pending one)',
  tag: 'Console pages',
  auth: consolePage,
  grants: read,
  html: true,
  query: z.object({ all: z.enum(['1']).optional(), cursor: z.string().max(4096).optional() }),
  errors: cursorErrors,
} as const satisfies Route;
