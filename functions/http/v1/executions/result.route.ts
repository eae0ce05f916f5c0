import type { Route } from '../../../../shared/http/route.ts';
import { ExecutionParams, ExecutionResult } from '../../../../shared/schemas/engine.ts';
import { read, refuses, wfRead } from '../../../route-kinds.ts';

export const route = {
  method: 'GET',
  path: '/api/v1/executions/{executionId}/result',
  handler: 'http/v1/executions/result',
  summary: 'The result of a finished run (409 before)',
  tag: 'Execute V1',
  auth: wfRead,
  grants: read,
  params: ExecutionParams,
  response: ExecutionResult,
  errors: [...refuses(409, 'EXECUTION_NOT_FINISHED')],
} as const satisfies Route;
