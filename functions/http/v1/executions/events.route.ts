import type { Route } from '../../../../shared/http/route.ts';
import { EventList, ExecutionParams, PageQuery } from '../../../../shared/schemas/engine.ts';
import { cursorErrors, read, wfRead } from '../../../route-kinds.ts';

export const route = {
  method: 'GET',
  path: '/api/v1/executions/{executionId}/events',
  handler: 'http/v1/executions/events',
  summary: 'The event log of a run, oldest first',
  tag: 'Execute V1',
  auth: wfRead,
  grants: read,
  params: ExecutionParams,
  query: PageQuery,
  response: EventList,
  errors: [...cursorErrors],
} as const satisfies Route;
