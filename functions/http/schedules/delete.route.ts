import type { Route } from '../../../shared/http/route.ts';
import { ScheduleParams } from '../../../shared/schemas/schedules.ts';
import { managesSchedules, refuses, session } from '../../route-kinds.ts';

export const route = {
  method: 'DELETE',
  path: '/api/schedules/{scheduleId}',
  handler: 'http/schedules/delete',
  summary: 'Delete a schedule',
  tag: 'Schedules',
  auth: session,
  grants: managesSchedules,
  params: ScheduleParams,
  status: 204,
  errors: [
    ...refuses(403, 'NOT_WORKFLOW_EDITOR'),
    // Paused or resumed meanwhile (it is still there): read it again.
    ...refuses(409, 'CONFLICT'),
  ],
} as const satisfies Route;
