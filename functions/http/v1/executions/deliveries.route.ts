import type { Route } from '../../../../shared/http/route.ts';
import { DeliveryList } from '../../../../shared/schemas/deliveries.ts';
import { ExecutionParams, PageQuery } from '../../../../shared/schemas/engine.ts';
import { cursorErrors, read, wfRead } from '../../../route-kinds.ts';

export const route = {
  method: 'GET',
  path: '/api/v1/executions/{executionId}/deliveries',
  handler: 'http/v1/executions/deliveries',
  summary: "The delivery log of a run's outgoing messages (event notifications, approval messages), oldest first",
  tag: 'Execute V1',
  auth: wfRead,
  grants: read,
  params: ExecutionParams,
  query: PageQuery,
  response: DeliveryList,
  errors: [...cursorErrors],
} as const satisfies Route;
