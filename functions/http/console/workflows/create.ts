// POST /console/workflows/new: the editor's draft checked as the API checks it; saved as version 1
// and on to the workflow's page, or the editor again with the draft and its errors (nothing saved).
import { route } from './create.route.ts';
import { consoleHttp } from '../../../../shared/console/console-http.tsx';
import { seeOther } from '../../../../shared/console/render.tsx';
import { createWorkflow } from '../../../../shared/domain/workflows.ts';
import type { AppError } from '../../../../shared/errors.ts';
import { httpStatus } from '../../../../shared/http-status.ts';
import { checkDraft, draftOf, refusalErrors } from './draft.ts';
import { editorPage } from './editor-view.tsx';

export const handler = consoleHttp(route, async ({ session, form }) => {
  const p = session.principal;
  const draft = draftOf(form);
  const checked = await checkDraft(p, draft, undefined);
  if (!checked.ok) return editorPage(session, { ...draft, ...checked, refused: true }, 400);
  try {
    const w = await createWorkflow(p, { name: checked.name, definition: checked.definition, recovery: false, editors: [] });
    return seeOther(`/console/workflows/${w.workflowId}`);
  } catch (e) {
    const errors = refusalErrors(draft.text, e);
    return editorPage(session, { ...draft, errors, definition: checked.definition, refused: true }, httpStatus(e as AppError));
  }
});
