// GET /console/runs/{executionId}/values/{part}: the whole of a run's inputs, variables or output.
import { route } from './value.route.ts';
import { consoleHttp } from '../../../../shared/console/console-http.tsx';
import { readRunValue } from '../../../../shared/domain/run-console.ts';
import { notFound } from '../../../../shared/errors.ts';
import { valuePage } from './value-view.tsx';

const TITLES = { inputs: 'Inputs', variables: 'Variables', output: 'Output' } as const;

export const handler = consoleHttp(route, async ({ session, params }) => {
  const { accountId } = session.principal;
  const { executionId, part } = params;
  const value = await readRunValue(accountId, executionId, part);
  if (value === undefined) throw notFound('VALUE_NOT_FOUND', `Run ${executionId} has no ${part} to show.`);
  return valuePage(session, `${TITLES[part]} of run ${executionId}`, `/console/runs/${executionId}`, value);
});
