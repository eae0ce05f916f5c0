// GET /console/schedules: the account's schedules (or one workflow's: 404 for another account's), and "N of M schedules".
import { route } from './list.route.ts';
import { consoleHttp } from '../../../../shared/console/console-http.tsx';
import { listAccountSchedules, scheduleUsage } from '../../../../shared/domain/schedule-console.ts';
import { requireWorkflow } from '../../../../shared/domain/workflow-access.ts';
import { schedulesPage } from './list-view.tsx';

export const handler = consoleHttp(route, async ({ session, query }) => {
  const p = session.principal;
  if (query.workflowId) await requireWorkflow(p.accountId, query.workflowId);
  const [schedules, usage] = await Promise.all([listAccountSchedules(p, query.workflowId), scheduleUsage(p)]);
  return schedulesPage(session, schedules, usage, query.workflowId);
});
