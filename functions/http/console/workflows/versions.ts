// GET /console/workflows/{workflowId}/versions: the workflow's versions (newest first, a cursor page at
// a time) with who saved each and when, and with `?from=&to=` the diff between two of them.
import { route } from './versions.route.ts';
import { consoleHttp } from '../../../../shared/console/console-http.tsx';
import { pageWorkflowVersions, readWorkflowVersion } from '../../../../shared/domain/workflow-versions.ts';
import { canEditWorkflow } from '../../../../shared/domain/workflow-access.ts';
import { memberEmails } from '../../../../shared/domain/workflow-console.ts';
import { VERSIONS_PAGE, versionsPage } from './versions-view.tsx';

export const handler = consoleHttp(route, async ({ session, params, query }) => {
  const p = session.principal;
  const [page, emails] = await Promise.all([
    pageWorkflowVersions(p, params.workflowId, VERSIONS_PAGE, query.cursor),
    memberEmails(p.accountId),
  ]);
  const w = page.workflow;
  // Both sides of a diff, or none: one side alone compares with the version before it.
  const to = query.to ?? (query.from !== undefined ? w.version : undefined);
  const from = query.from ?? (to !== undefined ? Math.max(1, to - 1) : undefined);
  const diff =
    from !== undefined && to !== undefined
      ? await Promise.all([readWorkflowVersion(p, w.workflowId, from, w), readWorkflowVersion(p, w.workflowId, to, w)])
      : undefined;
  return versionsPage(session, {
    workflow: w,
    versions: page.items,
    nextCursor: page.nextCursor,
    cursor: query.cursor,
    emails,
    canEdit: canEditWorkflow(p, w),
    diff: diff && { from: diff[0], to: diff[1] },
  });
});
