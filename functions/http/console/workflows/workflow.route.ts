import * as z from 'zod';
import type { Route } from '../../../../shared/http/route.ts';
import { V1WorkflowParams } from '../../../../shared/schemas/engine.ts';
import { CONSOLE_FUNCTIONS, consolePage, read } from '../../../route-kinds.ts';

export const route = {
  method: 'GET',
  path: '/console/workflows/{workflowId}',
  handler: CONSOLE_FUNCTIONS.read,
  summary: "The console's workflow page: its graph, definition, versions, webhooks, schedules and recent runs",
  tag: 'Console pages',
  auth: consolePage,
  grants: read,
  params: V1WorkflowParams,
  query: z.object({
    /** One of its versions (default: the current one). */
    version: z.coerce.number().int().min(1).max(1_000_000_000).optional(),
    /** `full`: the definition's JSON in full, alone (what "Show all" loads). */
    definition: z.enum(['full']).optional(),
  }),
  html: true,
} as const satisfies Route;
