import type { Route } from '../../../../shared/http/route.ts';
import { ScheduleParams } from '../../../../shared/schemas/schedules.ts';
import { CONSOLE_FUNCTIONS, consolePage, read } from '../../../route-kinds.ts';

export const route = {
  method: 'GET',
  path: '/console/schedules/{scheduleId}/delete',
  handler: CONSOLE_FUNCTIONS.read,
  summary: 'Confirm deleting a schedule: a page that names it and asks, changing nothing',
  tag: 'Console pages',
  auth: consolePage,
  grants: read,
  html: true,
  params: ScheduleParams,
} as const satisfies Route;
