import * as z from 'zod';
import type { Route } from '../../../../shared/http/route.ts';
import { ExecutionParams } from '../../../../shared/schemas/engine.ts';
import { CONSOLE_FUNCTIONS, consolePage, refuses, startsRuns } from '../../../route-kinds.ts';
import { RUN_ACTIONS } from './action-names.ts';

export const route = {
  method: 'POST',
  path: '/console/runs/{executionId}/{action}',
  handler: CONSOLE_FUNCTIONS.change,
  summary: "Cancel, retry, rerun or resume a run as the signed-in user (the confirmation page's form), then back to the run (303)",
  tag: 'Console pages',
  auth: consolePage,
  // As the v1 actions: moving a run writes events and sends run and notification messages.
  grants: startsRuns,
  html: true,
  status: 303,
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
      'ALREADY_RETRIED',
      'IDEMPOTENCY_KEY_REUSED',
      'EXECUTION_IN_PROGRESS',
      'EXECUTION_NOT_INTERRUPTED',
      'CONFLICT',
    ),
  ],
} as const satisfies Route;
