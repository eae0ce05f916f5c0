// GET /console/workflows/{workflowId}: one workflow (or one of its versions, `?version=`), what
// starts it and its recent runs; `?definition=full` is its definition's JSON alone, in full.
import { route } from './workflow.route.ts';
import { consoleHttp } from '../../../../shared/console/console-http.tsx';
import type { Workflow } from '../../../../shared/domain/read-types.ts';
import { memberEmails, newestVersions, workflowSchedules } from '../../../../shared/domain/workflow-console.ts';
import { maskDefinition } from '../../../../shared/domain/definition-secrets.ts';
import { pageExecutions } from '../../../../shared/domain/executions.ts';
import { scheduleView } from '../../../../shared/domain/schedules.ts';
import { listVisibleWebhooks } from '../../../../shared/domain/webhooks.ts';
import { canEditWorkflow, requireWorkflow } from '../../../../shared/domain/workflow-access.ts';
import { versionEntryView } from '../../../../shared/domain/workflow-versions.ts';
import { workflowView } from '../../../../shared/domain/workflows.ts';
import { workflowVersion } from '../../../../shared/engine/versions.ts';
import { notFound } from '../../../../shared/errors.ts';
import { definitionPage, LISTED_VERSIONS, RECENT_RUNS, workflowPage } from './workflow-view.tsx';

const noVersion = (workflowId: string, version: number) =>
  notFound('WORKFLOW_VERSION_NOT_FOUND', `Workflow ${workflowId} has no version ${version}.`);

/** The definition shown, secrets masked: the current one, or the version asked for. */
async function shownDefinition(w: Workflow, version: number | undefined) {
  if (version === undefined || version === w.version) return { version: w.version, definition: workflowView(w).definition };
  const v = version < w.version ? await workflowVersion(w.accountId, w.workflowId, version) : undefined;
  if (!v) throw noVersion(w.workflowId, version);
  return { version, definition: maskDefinition(v.definition) };
}

export const handler = consoleHttp(route, async ({ session, params, query }) => {
  const p = session.principal;
  const { workflowId } = params;
  // The workflow (404 for an unknown id and another account's alike), then what depends on it.
  const read = requireWorkflow(p.accountId, workflowId).then(async (w) => ({ w, shown: await shownDefinition(w, query.version) }));
  if (query.definition === 'full') {
    const { w, shown } = await read;
    return definitionPage(session, w, shown);
  }
  // Everything else at once, with the account's id in every key: nothing of another account is read.
  const [{ w, shown }, webhooks, schedules, runs, versions, emails] = await Promise.all([
    read,
    // As the API lists them (GET /api/webhooks): an admin sees the account's, a member their own.
    listVisibleWebhooks(p),
    workflowSchedules(p.accountId, workflowId),
    pageExecutions(p.accountId, { workflowId }, RECENT_RUNS, undefined),
    newestVersions(p.accountId, workflowId, LISTED_VERSIONS),
    // The versions' authors by email (one Query: an account has few users).
    memberEmails(p.accountId),
  ]);
  const listed = versions.items.map(versionEntryView);
  // A workflow saved before versions were kept has no item for its current version.
  if (listed[0]?.version !== w.version) listed.unshift({ version: w.version, createdAt: w.updatedAt, createdBy: w.updatedBy ?? null });
  const now = Date.now();
  return workflowPage(session, {
    workflow: w,
    shown,
    versions: listed.slice(0, LISTED_VERSIONS),
    emails,
    canEdit: canEditWorkflow(p, w),
    webhooks: webhooks.items.filter((h) => h.workflowId === workflowId),
    schedules: schedules.sort((a, b) => b.createdAt - a.createdAt).map((s) => scheduleView(s, now)),
    runs: runs.items,
    moreRuns: runs.nextCursor !== null,
  });
});
