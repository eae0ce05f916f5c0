import * as z from 'zod';
import type { Route } from '../../../../shared/http/route.ts';
import { ScheduleParams } from '../../../../shared/schemas/schedules.ts';
import { CONSOLE_FUNCTIONS, consolePage, firesSchedules, refuses } from '../../../route-kinds.ts';

/** What the schedules list's buttons do (delete: from its confirmation page). */
export const SCHEDULE_ACTIONS = ['run', 'pause', 'resume', 'delete'] as const;

export const route = {
  method: 'POST',
  path: '/console/schedules/{scheduleId}/{action}',
  handler: CONSOLE_FUNCTIONS.change,
  summary: '"Run now", "Pause", "Resume" or (confirmed) "Delete" a schedule as the signed-in user, as the API does; then back (303)',
  tag: 'Console pages',
  auth: consolePage,
  // A manual fire starts a run; pause, resume and delete change the schedule's timer.
  grants: firesSchedules,
  html: true,
  status: 303,
  params: ScheduleParams.extend({ action: z.enum(SCHEDULE_ACTIONS) }),
  errors: [
    ...refuses(403, 'NOT_WORKFLOW_EDITOR', 'PLAN_LIMIT_REACHED'),
    ...refuses(404, 'WORKFLOW_NOT_FOUND'),
    ...refuses(409, 'CONFLICT'),
  ],
} as const satisfies Route;
