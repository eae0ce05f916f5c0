// GET /console/runs/{executionId}: the run's page.
import { route } from './run.route.ts';
import { consoleHttp } from '../../../../shared/console/console-http.tsx';
import { loadRun } from './run-data.ts';
import { runPage } from './run-view.tsx';

export const handler = consoleHttp(route, async ({ session, params, query }) =>
  runPage(session, await loadRun(session, params.executionId, query)),
);
