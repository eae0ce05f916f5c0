// GET /console/runs/{executionId}/values/{part}: the whole of a run's inputs, variables or output.
import { route } from './value.route.ts';
import { consoleHttp } from '../../../../shared/console/console-http.tsx';
import { listEvents } from '../../../../shared/db/entities/run-events.ts';
import { requireExecution } from '../../../../shared/domain/executions.ts';
import { notFound } from '../../../../shared/errors.ts';
import { inputsOf } from './run-data.ts';
import { valuePage } from './value-view.tsx';

const TITLES = { inputs: 'Inputs', variables: 'Variables', output: 'Output' } as const;

export const handler = consoleHttp(route, async ({ session, params }) => {
  const { accountId } = session.principal;
  const { executionId, part } = params;
  const [e, first] = await Promise.all([
    requireExecution(accountId, executionId),
    part === 'inputs' ? listEvents(accountId, executionId, 1) : undefined,
  ]);
  const value = part === 'inputs' ? inputsOf(first?.items ?? []) : part === 'variables' ? e.variables : e.output;
  if (value === undefined) throw notFound('VALUE_NOT_FOUND', `Run ${executionId} has no ${part} to show.`);
  return valuePage(session, `${TITLES[part]} of run ${executionId}`, `/console/runs/${executionId}`, value);
});
