import * as z from 'zod';
import type { Route } from '../../../../shared/http/route.ts';
import { CONSOLE_FUNCTIONS, consolePage, read } from '../../../route-kinds.ts';

export const route = {
  method: 'GET',
  path: '/console/workflows',
  handler: CONSOLE_FUNCTIONS.read,
  summary: "The console's workflows list",
  tag: 'Console pages',
  auth: consolePage,
  grants: read,
  // Other parameters (a bookmark's tracking ones) are ignored, not refused.
  query: z.object({ cursor: z.string().max(4096).optional() }),
  html: true,
} as const satisfies Route;
