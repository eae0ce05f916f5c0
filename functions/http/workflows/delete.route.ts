import type { Route } from '../../../shared/http/route.ts';
import { WorkflowParams } from '../../../shared/schemas/engine.ts';
import { managesSchedules, refuses, session } from '../../route-kinds.ts';

export const route = {
  method: 'DELETE',
  path: '/api/workflows/{id}',
  handler: 'http/workflows/delete',
  summary: 'Delete a workflow (owner, editors, admins)',
  tag: 'Console',
  auth: session,
  // Its schedules go with it, timers included.
  grants: managesSchedules,
  params: WorkflowParams,
  status: 204,
  errors: [...refuses(409, 'WORKFLOW_CHANGED'), ...refuses(403, 'NOT_WORKFLOW_EDITOR')],
} as const satisfies Route;
