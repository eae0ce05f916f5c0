// PUT /api/schedules/{scheduleId}
import { route } from './update.route.ts';
import { http } from '../../../shared/http/handler.ts';
import { ok } from '../../../shared/http/responses.ts';
import { scheduleView, updateSchedule } from '../../../shared/domain/schedules.ts';

export const handler = http(route, async ({ principal, params, body }) =>
  ok(scheduleView(await updateSchedule(principal, params.scheduleId, body))),
);
