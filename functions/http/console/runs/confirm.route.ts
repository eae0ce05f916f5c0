import * as z from 'zod';
import type { Route } from '../../../../shared/http/route.ts';
import { ExecutionParams } from '../../../../shared/schemas/engine.ts';
import { CONSOLE_FUNCTIONS, consolePage, read, refuses } from '../../../route-kinds.ts';
import { RUN_ACTIONS } from './action-names.ts';

export const route = {
  method: 'GET',
  path: '/console/runs/{executionId}/{action}',
  handler: CONSOLE_FUNCTIONS.read,
  summary: 'Confirm a run action ("Cancel run", "Retry", "Rerun", "Resume"): a page that asks, changing nothing',
  tag: 'Console pages',
  auth: consolePage,
  grants: read,
  html: true,
  params: ExecutionParams.extend({ action: z.enum(RUN_ACTIONS) }),
  errors: [
    ...refuses(
      409,
      'EXECUTION_FINISHED',
      'EXECUTION_NOT_FAILED',
      'EXECUTION_REJECTED',
      'EXECUTION_FAILED_BEFORE_FIRST_STEP',
      'RETRY_LIMIT_REACHED',
      'RETENTION_EXPIRED',
      'EXECUTION_IN_PROGRESS',
      'EXECUTION_NOT_INTERRUPTED',
    ),
  ],
} as const satisfies Route;
