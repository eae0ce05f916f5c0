// POST /console/runs/{executionId}/{action}: the confirmed action, as the signed-in user (the CSRF
// token checked before this runs), then back to the run's page (a rerun: to the new run's).
import { route } from './action.route.ts';
import { consoleHttp } from '../../../../shared/console/console-http.tsx';
import { seeOther } from '../../../../shared/console/render.tsx';
import { doAction } from './actions.ts';

export const handler = consoleHttp(route, async ({ session, params, form }) =>
  seeOther(`/console/runs/${await doAction(params.action, session, params.executionId, form)}`),
);
