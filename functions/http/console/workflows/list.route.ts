import * as z from 'zod';
import type { Route } from '../../../../shared/http/route.ts';
import { consolePage, read } from '../../../route-kinds.ts';

export const route = {
  method: 'GET',
  path: '/console/workflows',
  handler: 'http/console/workflows/list',
  summary: "The console's workflows list",
  tag: 'Console pages',
  auth: consolePage,
  grants: read,
  // Other parameters (a bookmark's tracking ones) are ignored, not refused.
  query: z.object({ cursor: z.string().max(4096).optional() }),
  html: true,
} as const satisfies Route;
