import * as z from 'zod';
import type { Route } from '../../../../shared/http/route.ts';
import { consolePage, read } from '../../../route-kinds.ts';

export const route = {
  method: 'GET',
  path: '/console/schedules/new',
  handler: 'http/console/schedules/new',
  summary: 'The "Create schedule" form (`workflowId` chooses the workflow)',
  tag: 'Console pages',
  auth: consolePage,
  grants: read,
  html: true,
  query: z.object({ workflowId: z.string().max(64).optional() }),
} as const satisfies Route;
