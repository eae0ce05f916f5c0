import type { Route } from '../../../../shared/http/route.ts';
import { ExecutionParams, ExecutionView } from '../../../../shared/schemas/engine.ts';
import { read, wfRead } from '../../../route-kinds.ts';

export const route = {
  method: 'GET',
  path: '/api/v1/executions/{executionId}',
  handler: 'http/v1/executions/get',
  summary: 'Read a run with its steps',
  tag: 'Execute V1',
  auth: wfRead,
  grants: read,
  params: ExecutionParams,
  response: ExecutionView,
} as const satisfies Route;
