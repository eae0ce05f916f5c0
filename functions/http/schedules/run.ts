// POST /api/schedules/{scheduleId}/run: a manual fire, now.
import { route } from './run.route.ts';
import { http } from '../../../shared/http/handler.ts';
import { json } from '../../../shared/http/responses.ts';
import { executionView } from '../../../shared/domain/executions.ts';
import { runScheduleNow } from '../../../shared/domain/schedule-fires.ts';

export const handler = http(route, async ({ principal, params }) => {
  const execution = await runScheduleNow(principal, params.scheduleId);
  return json(202, executionView(execution), { location: `/api/v1/executions/${execution.executionId}` });
});
