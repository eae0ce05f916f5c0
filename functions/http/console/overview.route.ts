import * as z from 'zod';
import type { Route } from '../../../shared/http/route.ts';
import { CONSOLE_FUNCTIONS, consolePage, read } from '../../route-kinds.ts';

/** The overview's span: the last 24 hours (the default) or the last 7 days. */
export const OverviewQuery = z.object({ span: z.enum(['24h', '7d']).default('24h') });

export const route = {
  method: 'GET',
  path: '/console',
  handler: CONSOLE_FUNCTIONS.read,
  summary: "The console's overview",
  tag: 'Console pages',
  auth: consolePage,
  grants: read,
  html: true,
  query: OverviewQuery,
} as const satisfies Route;
