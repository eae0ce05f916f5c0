// POST /console/workflows/{workflowId}/versions/{version}/restore: the confirmed restore (the CSRF
// token checked before this runs), as the next version, then the workflow's page. The workflow saved
// by someone else since the confirmation was shown: 409, nothing saved.
import { route } from './restore.route.ts';
import { consoleHttp } from '../../../../shared/console/console-http.tsx';
import { seeOther } from '../../../../shared/console/render.tsx';
import { restoreWorkflowVersion } from '../../../../shared/domain/workflow-versions.ts';

export const handler = consoleHttp(route, async ({ session, params, form }) => {
  const expected = Number(form.get('expected'));
  const w = await restoreWorkflowVersion(
    session.principal,
    params.workflowId,
    params.version,
    Number.isSafeInteger(expected) && expected >= 1 ? expected : undefined,
  );
  return seeOther(`/console/workflows/${w.workflowId}`);
});
