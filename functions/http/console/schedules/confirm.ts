// GET /console/schedules/{scheduleId}/delete: "Delete schedule 'nightly'?" (404 for another account's).
import { route } from './confirm.route.ts';
import { consoleHttp } from '../../../../shared/console/console-http.tsx';
import { scheduleDetail } from '../../../../shared/domain/schedules.ts';
import { confirmDeletePage } from '../parts/confirm-delete-view.tsx';

export const handler = consoleHttp(route, async ({ session, params }) => {
  const s = await scheduleDetail(session.principal, params.scheduleId);
  return confirmDeletePage(session, {
    section: '/console/schedules',
    what: `schedule '${s.name}'`,
    action: `/console/schedules/${s.id}/delete`,
    back: '/console/schedules',
    detail: `It starts workflow ${s.workflowId} on ${s.expression} (${s.timezone}). Runs it started stay; no run starts from it again.`,
  });
});
