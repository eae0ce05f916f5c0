import type { Route } from '../../../../shared/http/route.ts';
import { ExecutionParams, ExecutionView } from '../../../../shared/schemas/engine.ts';
import { idempotencyErrors, refuses, startsRuns, wfExecute } from '../../../route-kinds.ts';

export const route = {
  method: 'POST',
  path: '/api/v1/executions/{executionId}/retry',
  handler: 'http/v1/executions/retry',
  summary: 'Retry a FAILED run from the step that failed (optional Idempotency-Key)',
  tag: 'Execute V1',
  auth: wfExecute,
  grants: startsRuns,
  params: ExecutionParams,
  status: 202,
  response: ExecutionView,
  errors: [
    ...idempotencyErrors,
    ...refuses(
      409,
      'EXECUTION_NOT_FAILED',
      'EXECUTION_REJECTED',
      'EXECUTION_FAILED_BEFORE_FIRST_STEP',
      'RETRY_LIMIT_REACHED',
      'RETENTION_EXPIRED',
      'ALREADY_RETRIED',
      'CONFLICT',
    ),
  ],
} as const satisfies Route;
