import * as z from 'zod';
import type { Route } from '../../../../shared/http/route.ts';
import { CONSOLE_FUNCTIONS, consolePage, read } from '../../../route-kinds.ts';

export const route = {
  method: 'GET',
  path: '/console/schedules/new',
  handler: CONSOLE_FUNCTIONS.read,
  summary: 'The "Create schedule" form (`workflowId` chooses the workflow)',
  tag: 'Console pages',
  auth: consolePage,
  grants: read,
  html: true,
  query: z.object({ workflowId: z.string().max(64).optional() }),
} as const satisfies Route;
