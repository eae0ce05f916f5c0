// POST /console/workflows/{workflowId}/run: "Start run". The values typed become the run's variables
// and the run starts as the v1 API starts it, as the signed-in user, on the audit log, with the form's
// one-time key as its Idempotency-Key (a double submit opens the one run); then its page (303).
// Refused values: the form again, as typed, each error at its field (400), nothing started.
import { randomUUID } from 'node:crypto';
import { route } from './start.route.ts';
import { consoleHttp } from '../../../../shared/console/console-http.tsx';
import { seeOther } from '../../../../shared/console/render.tsx';
import { startWorkflowRun } from '../../../../shared/domain/run-start.ts';
import { requireWorkflow } from '../../../../shared/domain/workflow-access.ts';
import { workflowView } from '../../../../shared/domain/workflows.ts';
import type { FieldError } from '../../../../shared/errors.ts';
import { byField, type FormErrors, isRefusal } from '../parts/labelled-field.tsx';
import { asFieldPath, draftOf, fieldOf, INPUT_FIELD, inputsOf, isKey, KEY_FIELD, variablesOf } from './run-inputs.ts';
import { runFormPage } from './run-form.tsx';

export const handler = consoleHttp(route, async ({ session, params, form }) => {
  const stored = await requireWorkflow(session.principal.accountId, params.workflowId);
  const w = workflowView(stored);
  const vars = variablesOf(w.definition);
  const draft = draftOf(form, vars);
  const order = vars.length ? vars.map((v) => fieldOf(v.name)) : [INPUT_FIELD];
  const sent = form.get(KEY_FIELD);
  const show = (status: number, errors: FormErrors, key = isKey(sent) ? sent : randomUUID()) =>
    runFormPage(session, { workflow: w, vars, draft, errors, key, status });
  const refused = (errors: FieldError[]) => show(400, byField(errors, order));
  if (!isKey(sent))
    return show(400, { fields: {}, form: ['This form lacked its one-time key: check the values and press "Start run" again.'] });
  const inputs = inputsOf(draft, vars);
  if (!inputs.ok) return refused(inputs.errors);
  try {
    const { execution } = await startWorkflowRun(session.principal, stored, inputs.variables, { key: sent, audit: true });
    return seeOther(`/console/runs/${execution.executionId}`);
  } catch (e) {
    if (!isRefusal(e)) throw e;
    if (e.code === 'IDEMPOTENCY_KEY_REUSED')
      return show(
        409,
        { fields: {}, form: ['This form already started a run with other values: check them and press "Start run" again.'] },
        randomUUID(),
      );
    const errs = (e.extra.body?.errors as FieldError[] | undefined) ?? [];
    if (e.code !== 'VALIDATION_FAILED' || !errs.length) throw e;
    return refused(errs.map((x) => ({ path: asFieldPath(x.path, vars), message: x.message })));
  }
});
