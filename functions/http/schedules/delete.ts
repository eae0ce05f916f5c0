// DELETE /api/schedules/{scheduleId}
import { route } from './delete.route.ts';
import { http } from '../../../shared/http/handler.ts';
import { noContent } from '../../../shared/http/responses.ts';
import { deleteSchedule } from '../../../shared/domain/schedules.ts';

export const handler = http(route, async ({ principal, params }) => {
  await deleteSchedule(principal, params.scheduleId);
  return noContent();
});
