import * as z from 'zod';
import type { Route } from '../../../../shared/http/route.ts';
import { ExecutionParams } from '../../../../shared/schemas/engine.ts';
import { CONSOLE_FUNCTIONS, consolePage, read } from '../../../route-kinds.ts';

export const route = {
  method: 'GET',
  path: '/console/runs/{executionId}/values/{part}',
  handler: CONSOLE_FUNCTIONS.read,
  summary: 'The whole of a run\'s inputs, variables or output (a run page\'s "Show all")',
  tag: 'Console pages',
  auth: consolePage,
  grants: read,
  html: true,
  params: ExecutionParams.extend({ part: z.enum(['inputs', 'variables', 'output']) }),
} as const satisfies Route;
