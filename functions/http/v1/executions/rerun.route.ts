import type { Route } from '../../../../shared/http/route.ts';
import { ExecutionParams, ExecutionView } from '../../../../shared/schemas/engine.ts';
import { idempotencyErrors, refuses, startsRuns, wfExecute } from '../../../route-kinds.ts';

export const route = {
  method: 'POST',
  path: '/api/v1/executions/{executionId}/rerun',
  handler: 'http/v1/executions/rerun',
  summary: 'Start a new run with the same inputs (rerunOf set)',
  tag: 'Execute V1',
  auth: wfExecute,
  grants: startsRuns,
  params: ExecutionParams,
  status: 202,
  response: ExecutionView,
  errors: [...idempotencyErrors, ...refuses(409, 'EXECUTION_IN_PROGRESS', 'RETENTION_EXPIRED')],
} as const satisfies Route;
