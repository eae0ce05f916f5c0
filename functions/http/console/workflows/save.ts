// POST /console/workflows/{workflowId}/edit: the draft checked as the API checks it, then saved as the
// next version (`updateWorkflow`, expecting the version the editor was opened on), on to the
// workflow's page. Refused: the editor again with the draft and its errors, nothing saved; a save by
// someone else meanwhile is the API's 409, the draft kept (saving again then replaces their version).
import { route } from './save.route.ts';
import { consoleHttp } from '../../../../shared/console/console-http.tsx';
import { seeOther } from '../../../../shared/console/render.tsx';
import { canEditWorkflow, requireWorkflow } from '../../../../shared/domain/workflow-access.ts';
import { updateWorkflow } from '../../../../shared/domain/workflows.ts';
import { definitionOf } from '../../../../shared/engine/versions.ts';
import type { AppError } from '../../../../shared/errors.ts';
import { httpStatus } from '../../../../shared/http-status.ts';
import { checkDraft, draftOf, expectedOf, notEditor, refusalErrors } from './draft.ts';
import { DRIFT_FIELD, editorPage } from './editor-view.tsx';

export const handler = consoleHttp(route, async ({ session, params, form }) => {
  const p = session.principal;
  const w = await requireWorkflow(p.accountId, params.workflowId);
  if (!canEditWorkflow(p, w)) throw notEditor();
  const draft = draftOf(form);
  const expected = expectedOf(form) ?? w.version;
  const checked = await checkDraft(p, draft, definitionOf(w.definition));
  if (!checked.ok) return editorPage(session, { workflow: { ...w, version: expected }, ...draft, ...checked, refused: true }, 400);
  // Managed by code: saved only when the person confirms that the edit drifts from its file.
  if (w.code && form.get(DRIFT_FIELD) !== 'yes') {
    const unconfirmed = {
      field: 'form' as const,
      path: '',
      message: 'This workflow is managed by code: confirm that this edit drifts from its file.',
    };
    return editorPage(
      session,
      { workflow: { ...w, version: expected }, ...draft, errors: [unconfirmed], definition: checked.definition, refused: true },
      400,
    );
  }
  try {
    await updateWorkflow(p, w.workflowId, { name: checked.name, definition: checked.definition }, Date.now(), {
      expectedVersion: expected,
    });
    return seeOther(`/console/workflows/${w.workflowId}`);
  } catch (e) {
    const errors = refusalErrors(draft.text, e);
    const conflict = (e as AppError).code === 'WORKFLOW_CHANGED';
    // After a conflict the editor expects the version saved meanwhile: saving again replaces it, knowingly.
    const now = conflict ? await requireWorkflow(p.accountId, w.workflowId) : { ...w, version: expected };
    if (conflict)
      errors.push({
        field: 'form',
        path: '',
        message: `It is now at version ${now.version}; Save again to replace that version with this draft.`,
      });
    return editorPage(
      session,
      { workflow: now, ...draft, errors, definition: checked.definition, refused: true },
      httpStatus(e as AppError),
    );
  }
});
