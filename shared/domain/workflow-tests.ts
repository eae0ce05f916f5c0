import type { Approval } from '../db/entities/approval.ts';
import { AppError, type FieldError, validationFailed } from '../errors.ts';
import type { WorkflowDefinition } from '../engine/definition.ts';
import { everyStep } from '../engine/every-step.ts';
import { stepModule } from '../engine/steps/index.ts';
import { type FormCheck, runTest, type TestMocks, type TestResult, testExecution } from '../engine/test-run.ts';
import { applyVariableDefaults } from '../engine/variables.ts';
import { definitionOf } from '../engine/versions.ts';
import { mockOf, type TestRunBody } from '../schemas/workflow-tests.ts';
import { formValues } from './approvals.ts';
import { requireWorkflow } from './workflow-access.ts';

/**
 * `POST /api/workflows/test` (docs/workflows-as-code.md "Test runs"): a workflow, given or stored,
 * executed on the engine in memory with its effects mocked (shared/engine/test-run.ts). Reads the
 * workflow when named by id, and nothing else; writes nothing, sends nothing.
 */

/** A draft has no workflow of its own: its test run names none. */
const DRAFT = { workflowId: 'wf_test', version: 0 };

/** Each mock names a step of the definition and has the shape its step type takes (400 at `mocks.<id>…` otherwise). */
function checkMocks(definition: WorkflowDefinition, mocks: Record<string, unknown>): TestMocks {
  const steps = new Map(everyStep(definition).map((s) => [s.id, s]));
  const errors: FieldError[] = [];
  const parsed: Record<string, unknown> = {};
  for (const [id, mock] of Object.entries(mocks)) {
    const step = steps.get(id);
    const schema = step && stepModule(step).mock;
    if (!step) errors.push({ path: `mocks.${id}`, message: 'no step of the workflow has this id' });
    else if (!schema) errors.push({ path: `mocks.${id}`, message: `a ${step.type} step takes no mock (it has no effect outside the run)` });
    else {
      const r = mockOf(schema, mock);
      if (r.success) parsed[id] = r.data;
      else errors.push(...r.error.issues.map((i) => ({ path: ['mocks', id, ...i.path].map(String).join('.'), message: i.message })));
    }
  }
  if (errors.length) throw validationFailed(errors);
  return parsed as TestMocks;
}

/** A mocked approve's form values, checked as a reviewer's are (400 at `mocks.<id>.form.<field>`). */
const checkForm: FormCheck = (stepId, form, submitted) => {
  try {
    return formValues({ form: (form ?? undefined) as Approval['form'] } as Approval, submitted).values;
  } catch (err) {
    const errors = err instanceof AppError ? ((err.extra.body as { errors?: FieldError[] } | undefined)?.errors ?? []) : undefined;
    if (!errors) throw err;
    throw validationFailed(errors.map((e) => ({ ...e, path: e.path.replace(/^formData/, `mocks.${stepId}.form`) })));
  }
};

export async function testWorkflow(accountId: string, body: TestRunBody): Promise<TestResult> {
  const w = body.workflowId ? await requireWorkflow(accountId, body.workflowId) : undefined;
  const definition = w ? definitionOf(w.definition) : (body.definition as WorkflowDefinition);
  const mocks = checkMocks(definition, body.mocks);
  const vars = applyVariableDefaults(definition, body.input);
  if (!vars.ok) throw validationFailed(vars.errors.map((e) => ({ ...e, path: e.path.replace(/^variables/, 'input') })));
  const e = testExecution({ accountId, ...(w ? { workflowId: w.workflowId, version: w.version } : DRAFT) }, definition, vars.variables);
  return runTest(e, definition, mocks, checkForm);
}
