// GET /console/workflows/{workflowId}/edit: the editor with the current version's name and definition
// (its secrets masked, as every read shows them; saving a mask keeps the stored secret). 403 for a
// member who may not edit it, as the API answers.
import { route } from './edit.route.ts';
import { consoleHttp } from '../../../../shared/console/console-http.tsx';
import { canEditWorkflow, requireWorkflow } from '../../../../shared/domain/workflow-access.ts';
import { workflowView } from '../../../../shared/domain/workflows.ts';
import { notEditor } from './draft.ts';
import { editorPage } from './editor-view.tsx';

export const handler = consoleHttp(route, async ({ session, params }) => {
  const w = await requireWorkflow(session.principal.accountId, params.workflowId);
  if (!canEditWorkflow(session.principal, w)) throw notEditor();
  const { definition } = workflowView(w);
  return editorPage(session, { workflow: w, name: w.name, text: `${JSON.stringify(definition, null, 2)}\n`, errors: [], definition });
});
