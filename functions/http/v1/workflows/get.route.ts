import type { Route } from '../../../../shared/http/route.ts';
import { V1WorkflowParams, WorkflowSummary } from '../../../../shared/schemas/engine.ts';
import { read, wfRead } from '../../../route-kinds.ts';

export const route = {
  method: 'GET',
  path: '/api/v1/workflows/{workflowId}',
  handler: 'http/v1/workflows/get',
  summary: 'Read a workflow: variables and steps',
  tag: 'Workflow V1',
  auth: wfRead,
  grants: read,
  params: V1WorkflowParams,
  response: WorkflowSummary,
} as const satisfies Route;
