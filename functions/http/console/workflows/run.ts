// GET /console/workflows/{workflowId}/run: the "Run workflow" form, its fields at the variables'
// defaults and a fresh one-time key (404 for an unknown id and another account's alike).
import { randomUUID } from 'node:crypto';
import { route } from './run.route.ts';
import { consoleHttp } from '../../../../shared/console/console-http.tsx';
import { requireWorkflow } from '../../../../shared/domain/workflow-access.ts';
import { workflowView } from '../../../../shared/domain/workflows.ts';
import { noErrors } from '../parts/labelled-field.tsx';
import { draftOfDefaults, variablesOf } from './run-inputs.ts';
import { runFormPage } from './run-form.tsx';

export const handler = consoleHttp(route, async ({ session, params }) => {
  const w = workflowView(await requireWorkflow(session.principal.accountId, params.workflowId));
  const vars = variablesOf(w.definition);
  return runFormPage(session, { workflow: w, vars, draft: draftOfDefaults(vars), errors: noErrors, key: randomUUID() });
});
