// GET /console: the overview.
import { route } from './overview.route.ts';
import { consoleHttp } from '../../../shared/console/handler.tsx';
import { pageExecutions } from '../../../shared/domain/executions.ts';
import { overviewPage } from './overview-view.tsx';

export const handler = consoleHttp(route, async ({ session }) => {
  const runs = await pageExecutions(session.principal.accountId, {}, 10, undefined);
  return overviewPage(session, runs.items);
});
