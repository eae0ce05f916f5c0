// GET /console/runs/{executionId}/steps/{stepId}/{part}: the whole of a step's input (its definition in the run's version) or output.
import { route } from './step-value.route.ts';
import { consoleHttp } from '../../../../shared/console/console-http.tsx';
import { requireExecution } from '../../../../shared/domain/executions.ts';
import { runDefinition } from '../../../../shared/engine/versions.ts';
import { notFound } from '../../../../shared/errors.ts';
import { stepInput } from './run-steps.tsx';
import { valuePage } from './value-view.tsx';

export const handler = consoleHttp(route, async ({ session, params }) => {
  const { executionId, stepId, part } = params;
  const e = await requireExecution(session.principal.accountId, executionId);
  const value =
    part === 'output' ? (Object.hasOwn(e.outputs, stepId) ? e.outputs[stepId] : undefined) : stepInput(await runDefinition(e), stepId);
  if (value === undefined) throw notFound('VALUE_NOT_FOUND', `Step ${stepId} of run ${executionId} has no ${part} to show.`);
  const title = `${part === 'output' ? 'Output' : 'Input'} of step ${stepId}`;
  return valuePage(session, title, `/console/runs/${executionId}#step-${stepId}`, value);
});
