import type { Route } from '../../../../shared/http/route.ts';
import { ExecutionParams, ExecutionView } from '../../../../shared/schemas/engine.ts';
import { refuses, startsRuns, wfExecute } from '../../../route-kinds.ts';

export const route = {
  method: 'POST',
  path: '/api/v1/executions/{executionId}/resume',
  handler: 'http/v1/executions/resume',
  summary: 'Resume an INTERRUPTED run from the step it stopped in',
  tag: 'Execute V1',
  auth: wfExecute,
  grants: startsRuns,
  params: ExecutionParams,
  response: ExecutionView,
  errors: [...refuses(409, 'EXECUTION_NOT_INTERRUPTED', 'CONFLICT')],
} as const satisfies Route;
