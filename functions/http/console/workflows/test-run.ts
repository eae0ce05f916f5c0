// POST /console/workflows/test: the editor's "Test run". The draft is checked as the live check does
// it (`checkDraft`), and a draft whose schema holds is run on the test-run engine with the sample
// input and no mocks, as `POST /api/workflows/test` runs a definition: in memory, nothing written or
// sent. The answer: the editor again, draft as typed, with the result and its path on the graph; to
// htmx (the button's `hx-post`), the check and the result alone.
import { route } from './test-run.route.ts';
import { consoleHttp } from '../../../../shared/console/console-http.tsx';
import { requireWorkflow } from '../../../../shared/domain/workflow-access.ts';
import { testWorkflow } from '../../../../shared/domain/workflow-tests.ts';
import type { WorkflowDefinition } from '../../../../shared/engine/definition.ts';
import { definitionOf } from '../../../../shared/engine/versions.ts';
import { type FieldError, notFound } from '../../../../shared/errors.ts';
import { V1WorkflowParams } from '../../../../shared/schemas/engine.ts';
import { isRefusal } from '../parts/labelled-field.tsx';
import { checkDraft, draftOf, expectedOf, testedDigest } from './draft.ts';
import { TEST_INPUT_FIELD, type TestOutcome, type TestShown } from './editor-test.tsx';
import { draftFragment, editorPage } from './editor-view.tsx';

const SAMPLE = 'Sample input';

/** The draft run with the sample (a JSON object), or why it was not run. */
async function testDraft(accountId: string, definition: WorkflowDefinition | undefined, sample: string): Promise<TestOutcome> {
  if (!definition) return { refused: ['The draft is not a valid definition yet: fix the errors listed above, then test it.'] };
  let input: unknown;
  try {
    input = JSON.parse(sample.trim() === '' ? '{}' : sample);
  } catch (e) {
    return { refused: [`${SAMPLE}: is not JSON: ${(e as Error).message}`] };
  }
  if (input === null || typeof input !== 'object' || Array.isArray(input)) return { refused: [`${SAMPLE}: must be a JSON object`] };
  try {
    return { result: await testWorkflow(accountId, { definition, input: input as Record<string, unknown>, mocks: {} }) };
  } catch (e) {
    if (!isRefusal(e)) throw e;
    const errs = (e.extra.body?.errors as FieldError[] | undefined) ?? [];
    return { refused: errs.length ? errs.map((x) => `${x.path.replace(/^input/, SAMPLE)}: ${x.message}`) : [e.message] };
  }
}

export const handler = consoleHttp(route, async ({ session, form, event }) => {
  const p = session.principal;
  const id = form.get('workflowId');
  let w: Awaited<ReturnType<typeof requireWorkflow>> | undefined;
  if (id) {
    const parsed = V1WorkflowParams.shape.workflowId.safeParse(id);
    if (!parsed.success) throw notFound('WORKFLOW_NOT_FOUND', 'Workflow does not exist.');
    w = await requireWorkflow(p.accountId, parsed.data);
  }
  const draft = draftOf(form);
  const sample = form.get(TEST_INPUT_FIELD) ?? '';
  const checked = await checkDraft(p, draft, w ? definitionOf(w.definition) : undefined);
  const errors = checked.ok ? [] : checked.errors;
  const test: TestShown = { ...(await testDraft(p.accountId, checked.definition, sample)), tested: testedDigest(draft.text) };
  if (event.headers['hx-request'] === 'true')
    return draftFragment(
      errors.filter((e) => e.field !== 'name'),
      checked.definition,
      test,
    );
  const workflow = w ? { ...w, version: expectedOf(form) ?? w.version } : undefined;
  return editorPage(session, { ...(workflow ? { workflow } : {}), ...draft, errors, definition: checked.definition, sample, test });
});
