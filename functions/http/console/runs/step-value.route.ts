import * as z from 'zod';
import type { Route } from '../../../../shared/http/route.ts';
import { StepId } from '../../../../shared/engine/steps/common.ts';
import { ExecutionParams } from '../../../../shared/schemas/engine.ts';
import { CONSOLE_FUNCTIONS, consolePage, read } from '../../../route-kinds.ts';

export const route = {
  method: 'GET',
  path: '/console/runs/{executionId}/steps/{stepId}/{part}',
  handler: CONSOLE_FUNCTIONS.read,
  summary: 'The whole of a step\'s input (as defined) or output in a run (a run page\'s "Show all")',
  tag: 'Console pages',
  auth: consolePage,
  grants: read,
  html: true,
  params: ExecutionParams.extend({ stepId: StepId, part: z.enum(['input', 'output']) }),
} as const satisfies Route;
