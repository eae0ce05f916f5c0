import type { Route } from '../../../../shared/http/route.ts';
import { ExecutionView, StartRunBody, V1WorkflowParams } from '../../../../shared/schemas/engine.ts';
import { idempotencyErrors, startsRuns, wfExecute } from '../../../route-kinds.ts';

export const route = {
  method: 'POST',
  path: '/api/v1/workflows/{workflowId}/runs',
  handler: 'http/v1/workflows/start-run',
  summary: 'Start a run (optional Idempotency-Key)',
  tag: 'Workflow V1',
  auth: wfExecute,
  grants: startsRuns,
  params: V1WorkflowParams,
  body: StartRunBody,
  status: 202,
  response: ExecutionView,
  maxBodyBytes: 512 * 1024,
  errors: [...idempotencyErrors],
} as const satisfies Route;
