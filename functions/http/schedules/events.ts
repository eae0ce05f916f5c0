// GET /api/schedules/{scheduleId}/events
import { route } from './events.route.ts';
import { http } from '../../../shared/http/handler.ts';
import { ok } from '../../../shared/http/responses.ts';
import { pageScheduleEvents } from '../../../shared/domain/schedules.ts';

export const handler = http(route, async ({ principal, params, query }) =>
  ok(await pageScheduleEvents(principal, params.scheduleId, query.limit, query.cursor)),
);
