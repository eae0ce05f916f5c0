// POST /console/workflows/validate: the editor's live check (htmx, as you type). The draft is checked
// by the same schema and save checks as a save (`checkDraft`), against the workflow's current
// definition when `workflowId` names one (its masked secrets); nothing is saved. The answer is a
// fragment: the errors with their paths and lines, and the draft's graph; or 204 (htmx swaps nothing)
// when the page shows a test run of this very text (`showsTestOf`), whose result it would wipe. The
// editor's requests take turns (`hx-sync` on its form): a check typed before a test run waits for it.
import { route } from './validate.route.ts';
import { consoleHttp } from '../../../../shared/console/console-http.tsx';
import { CONSOLE_HEADERS } from '../../../../shared/console/render.tsx';
import { requireWorkflow } from '../../../../shared/domain/workflow-access.ts';
import { definitionOf } from '../../../../shared/engine/versions.ts';
import { notFound } from '../../../../shared/errors.ts';
import { V1WorkflowParams } from '../../../../shared/schemas/engine.ts';
import { checkDraft, draftOf, showsTestOf } from './draft.ts';
import { draftFragment } from './editor-view.tsx';

export const handler = consoleHttp(route, async ({ session, form }) => {
  const p = session.principal;
  const id = form.get('workflowId');
  let current: ReturnType<typeof definitionOf> | undefined;
  if (id) {
    const parsed = V1WorkflowParams.shape.workflowId.safeParse(id);
    if (!parsed.success) throw notFound('WORKFLOW_NOT_FOUND', 'Workflow does not exist.');
    current = definitionOf((await requireWorkflow(p.accountId, parsed.data)).definition);
  }
  if (showsTestOf(form)) return { statusCode: 204, headers: { ...CONSOLE_HEADERS }, body: '' };
  const checked = await checkDraft(p, draftOf(form), current);
  return draftFragment(checked.ok ? [] : checked.errors.filter((e) => e.field !== 'name'), checked.definition);
});
