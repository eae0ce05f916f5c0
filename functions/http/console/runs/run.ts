// GET /console/runs/{executionId}: the run's page.
import { route } from './run.route.ts';
import { consoleHttp } from '../../../../shared/console/console-http.tsx';
import { readRunPage } from '../../../../shared/domain/run-console.ts';
import type { Zoom } from '../../../../shared/console/timeline-scale.ts';
import { runPage } from './run-view.tsx';

export const handler = consoleHttp(route, async ({ session, params, query }) =>
  runPage(
    session,
    await readRunPage(
      { accountId: session.principal.accountId, userId: session.principal.userId, email: session.email },
      params.executionId,
      query,
    ),
    {
      time: query.time ?? 'real',
      zoom: Number(query.zoom ?? 1) as Zoom,
      loop: query.loop,
      status: query.status,
      from: query.from,
      iteration: query.iteration,
    },
  ),
);
