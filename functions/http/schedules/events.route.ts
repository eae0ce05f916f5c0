import type { Route } from '../../../shared/http/route.ts';
import { EventList, PageQuery } from '../../../shared/schemas/engine.ts';
import { ScheduleParams } from '../../../shared/schemas/schedules.ts';
import { cursorErrors, read, session } from '../../route-kinds.ts';

export const route = {
  method: 'GET',
  path: '/api/schedules/{scheduleId}/events',
  handler: 'http/schedules/events',
  summary: "A schedule's events (schedule.fired, schedule.skipped, schedule.failed), by their per-schedule seq, oldest first",
  tag: 'Schedules',
  auth: session,
  grants: read,
  params: ScheduleParams,
  query: PageQuery,
  response: EventList,
  errors: [...cursorErrors],
} as const satisfies Route;
