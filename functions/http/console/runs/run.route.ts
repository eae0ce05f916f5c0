import * as z from 'zod';
import type { Route } from '../../../../shared/http/route.ts';
import { ITERATION_STATUSES } from '../../../../shared/console/run-iterations.ts';
import { MAX_ITEMS, StepId } from '../../../../shared/engine/steps/common.ts';
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
  // `cursor`: a later page of the run's events; `deliveriesCursor`: of its deliveries. How the page is
  // viewed (run-url.ts): `time` and `zoom` the timeline's axis; `loop`, `status`, `from` the iteration
  // browser's loop, filter and page; `iteration` (1-based) the iteration opened.
  query: z.object({
    cursor: z.string().max(4096).optional(),
    deliveriesCursor: z.string().max(4096).optional(),
    time: z.enum(['real', 'compressed']).optional(),
    zoom: z.enum(['1', '2', '4', '8']).optional(),
    loop: StepId.optional(),
    status: z.enum(ITERATION_STATUSES).optional(),
    from: z.coerce.number().int().min(0).max(MAX_ITEMS).optional(),
    iteration: z.coerce.number().int().min(1).max(MAX_ITEMS).optional(),
  }),
  errors: [...cursorErrors],
} as const satisfies Route;
