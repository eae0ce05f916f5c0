import type { Route } from '../../../shared/http/route.ts';
import { ScheduleParams, ScheduleView } from '../../../shared/schemas/schedules.ts';
import { read, session } from '../../route-kinds.ts';

export const route = {
  method: 'GET',
  path: '/api/schedules/{scheduleId}',
  handler: 'http/schedules/get',
  summary: 'Read a schedule (with its next fire times and counts)',
  tag: 'Schedules',
  auth: session,
  grants: read,
  params: ScheduleParams,
  response: ScheduleView,
} as const satisfies Route;
