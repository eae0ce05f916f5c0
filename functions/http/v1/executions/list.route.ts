import type { Route } from '../../../../shared/http/route.ts';
import { ExecutionList, ExecutionsQuery } from '../../../../shared/schemas/engine.ts';
import { cursorErrors, read, wfRead } from '../../../route-kinds.ts';

export const route = {
  method: 'GET',
  path: '/api/v1/executions',
  handler: 'http/v1/executions/list',
  summary: 'List runs, newest first',
  tag: 'Execute V1',
  auth: wfRead,
  grants: read,
  query: ExecutionsQuery,
  response: ExecutionList,
  errors: [...cursorErrors],
} as const satisfies Route;
