// POST /api/workflows/{id}/schedules
import { route } from './create.route.ts';
import { http } from '../../../shared/http/handler.ts';
import { created } from '../../../shared/http/responses.ts';
import { createSchedule, scheduleView } from '../../../shared/domain/schedules.ts';

export const handler = http(route, async ({ principal, params, body }) => {
  const s = await createSchedule(principal, params.id, body);
  return created(scheduleView(s), `/api/schedules/${s.scheduleId}`);
});
