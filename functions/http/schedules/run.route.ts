import type { Route } from '../../../shared/http/route.ts';
import { ScheduleParams, ScheduleRun } from '../../../shared/schemas/schedules.ts';
import { firesSchedules, refuses, session } from '../../route-kinds.ts';

export const route = {
  method: 'POST',
  path: '/api/schedules/{scheduleId}/run',
  handler: 'http/schedules/run',
  summary: 'Fire a schedule now (manual fire; obeys overlap)',
  tag: 'Schedules',
  auth: session,
  grants: firesSchedules,
  params: ScheduleParams,
  status: 202,
  response: ScheduleRun,
  errors: [
    // The workflow deleted meanwhile (its schedules go with it); a manual fire whose variables no longer fit it.
    ...refuses(400, 'VALIDATION_FAILED'),
    ...refuses(404, 'WORKFLOW_NOT_FOUND'),
    ...refuses(403, 'NOT_WORKFLOW_EDITOR', 'PLAN_LIMIT_REACHED'),
    // CONFLICT: the fire lost its race with other fires every time it tried.
    ...refuses(409, 'SCHEDULE_RUN_IN_PROGRESS', 'CONFLICT'),
  ],
} as const satisfies Route;
