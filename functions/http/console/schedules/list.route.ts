import * as z from 'zod';
import type { Route } from '../../../../shared/http/route.ts';
import { CONSOLE_FUNCTIONS, consolePage, read } from '../../../route-kinds.ts';

export const route = {
  method: 'GET',
  path: '/console/schedules',
  handler: CONSOLE_FUNCTIONS.read,
  summary: "The console's schedules: the account's, or one workflow's (`workflowId`), with the plan's count",
  tag: 'Console pages',
  auth: consolePage,
  grants: read,
  html: true,
  query: z.object({ workflowId: z.string().max(64).optional() }),
} as const satisfies Route;
