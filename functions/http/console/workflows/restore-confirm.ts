// GET /console/workflows/{workflowId}/versions/{version}/restore: "Restore version 1 of 'Deploy'?",
// with what the restore would change (the diff from the current version); its button POSTs.
import { route } from './restore-confirm.route.ts';
import { consoleHttp } from '../../../../shared/console/console-http.tsx';
import { canEditWorkflow, requireWorkflow } from '../../../../shared/domain/workflow-access.ts';
import { readWorkflowVersion } from '../../../../shared/domain/workflow-versions.ts';
import { notEditor } from './draft.ts';
import { restoreConfirmPage } from './restore-view.tsx';

export const handler = consoleHttp(route, async ({ session, params }) => {
  const p = session.principal;
  const w = await requireWorkflow(p.accountId, params.workflowId);
  if (!canEditWorkflow(p, w)) throw notEditor();
  const [old, current] = await Promise.all([
    readWorkflowVersion(p, w.workflowId, params.version, w),
    readWorkflowVersion(p, w.workflowId, w.version, w),
  ]);
  return restoreConfirmPage(session, w, old, current);
});
