import type { Route } from '../../../shared/http/route.ts';
import { WorkflowParams } from '../../../shared/schemas/engine.ts';
import { CreateScheduleBody, ScheduleView } from '../../../shared/schemas/schedules.ts';
import { managesSchedules, refuses, session } from '../../route-kinds.ts';

export const route = {
  method: 'POST',
  path: '/api/workflows/{id}/schedules',
  handler: 'http/schedules/create',
  summary: 'Create a schedule of a workflow (its editors)',
  tag: 'Schedules',
  auth: session,
  grants: managesSchedules,
  params: WorkflowParams,
  body: CreateScheduleBody,
  status: 201,
  response: ScheduleView,
  maxBodyBytes: 64 * 1024,
  errors: [...refuses(403, 'NOT_WORKFLOW_EDITOR', 'PLAN_LIMIT_REACHED')],
} as const satisfies Route;
