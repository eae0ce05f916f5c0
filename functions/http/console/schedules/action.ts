// POST /console/schedules/{scheduleId}/{action}: the API's manual fire (to the new run's page), pause
// and resume (an update of `enabled`) and delete, as the signed-in user; refusals are error pages.
import { route } from './action.route.ts';
import { consoleHttp } from '../../../../shared/console/console-http.tsx';
import { seeOther } from '../../../../shared/console/render.tsx';
import { runScheduleNow } from '../../../../shared/domain/schedule-fires.ts';
import { deleteSchedule, updateSchedule } from '../../../../shared/domain/schedules.ts';

export const handler = consoleHttp(route, async ({ session, params }) => {
  const p = session.principal;
  switch (params.action) {
    case 'run':
      return seeOther(`/console/runs/${(await runScheduleNow(p, params.scheduleId)).executionId}`);
    case 'pause':
    case 'resume':
      await updateSchedule(p, params.scheduleId, { enabled: params.action === 'resume' });
      return seeOther('/console/schedules');
    case 'delete':
      await deleteSchedule(p, params.scheduleId);
      return seeOther('/console/schedules');
  }
});
