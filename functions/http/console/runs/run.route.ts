import * as z from 'zod';
import type { Route } from '../../../../shared/http/route.ts';
import { ExecutionParams } from '../../../../shared/schemas/engine.ts';
import { CONSOLE_FUNCTIONS, consolePage, cursorErrors, read } from '../../../route-kinds.ts';

export const route = {
  method: 'GET',
  path: '/console/runs/{executionId}',
  handler: CONSOLE_FUNCTIONS.read,
  summary: "A run's page: status, inputs, result, timeline, steps, events, artifacts, deliveries and actions",
  tag: 'Console pages',
  auth: consolePage,
  grants: read,
  html: true,
  params: ExecutionParams,
  // `cursor`: a later page of the run's events; `deliveriesCursor`: of its deliveries.
  query: z.object({ cursor: z.string().max(4096).optional(), deliveriesCursor: z.string().max(4096).optional() }),
  errors: [...cursorErrors],
} as const satisfies Route;
