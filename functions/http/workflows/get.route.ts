import type { Route } from '../../../shared/http/route.ts';
import { WorkflowParams, WorkflowView } from '../../../shared/schemas/engine.ts';
import { read, session } from '../../route-kinds.ts';

export const route = {
  method: 'GET',
  path: '/api/workflows/{id}',
  handler: 'http/workflows/get',
  summary: 'Read a workflow',
  tag: 'Console',
  auth: session,
  grants: read,
  params: WorkflowParams,
  response: WorkflowView,
} as const satisfies Route;
