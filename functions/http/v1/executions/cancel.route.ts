import type { Route } from '../../../../shared/http/route.ts';
import { CancelBody, ExecutionParams, ExecutionView } from '../../../../shared/schemas/engine.ts';
import { refuses, startsRuns, wfExecute } from '../../../route-kinds.ts';

export const route = {
  method: 'POST',
  path: '/api/v1/executions/{executionId}/cancel',
  handler: 'http/v1/executions/cancel',
  summary: 'Cancel a run',
  tag: 'Execute V1',
  auth: wfExecute,
  // Moving a run emits events, which go to the notifications queue.
  grants: startsRuns,
  params: ExecutionParams,
  body: CancelBody,
  response: ExecutionView,
  errors: [...refuses(409, 'EXECUTION_FINISHED', 'CONFLICT')],
} as const satisfies Route;
