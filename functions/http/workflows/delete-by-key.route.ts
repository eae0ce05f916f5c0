import type { Route } from '../../../shared/http/route.ts';
import { WorkflowKeyParams } from '../../../shared/schemas/workflow-file.ts';
import { managesSchedules, refuses, session } from '../../route-kinds.ts';

export const route = {
  method: 'DELETE',
  path: '/api/workflow-keys/{key}',
  handler: 'http/workflows/delete-by-key',
  summary: 'Delete the workflow with this key (workflows as code: `flowgate apply --prune`)',
  tag: 'Console',
  auth: session,
  // Its schedules go with it, timers included (as DELETE /api/workflows/{id}).
  grants: managesSchedules,
  params: WorkflowKeyParams,
  status: 204,
  errors: [...refuses(404, 'WORKFLOW_NOT_FOUND'), ...refuses(409, 'WORKFLOW_CHANGED'), ...refuses(403, 'NOT_WORKFLOW_EDITOR')],
} as const satisfies Route;
