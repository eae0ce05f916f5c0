import type { Route } from '../../../shared/http/route.ts';
import { ScheduleParams, ScheduleView, UpdateScheduleBody } from '../../../shared/schemas/schedules.ts';
import { managesSchedules, refuses, session } from '../../route-kinds.ts';

export const route = {
  method: 'PUT',
  path: '/api/schedules/{scheduleId}',
  handler: 'http/schedules/update',
  summary: 'Update a schedule (partial)',
  tag: 'Schedules',
  auth: session,
  grants: managesSchedules,
  params: ScheduleParams,
  body: UpdateScheduleBody,
  response: ScheduleView,
  maxBodyBytes: 64 * 1024,
  errors: [
    // The workflow deleted meanwhile (its schedules go with it).
    ...refuses(404, 'WORKFLOW_NOT_FOUND'),
    ...refuses(403, 'NOT_WORKFLOW_EDITOR', 'PLAN_LIMIT_REACHED'),
    // Changed by another meanwhile (it is still there): read it again.
    ...refuses(409, 'CONFLICT'),
  ],
} as const satisfies Route;
