import { audited } from '../db/audited.ts';
import { idempotencyScope } from '../db/entities/idempotency.ts';
import type { Workflow } from '../db/entities/workflow.ts';
import { startRun } from '../engine/runs.ts';
import type { Principal } from './principal.ts';
import { requireWorkflow } from './workflow-access.ts';

// Starting a run of a workflow by a person or a key: the v1 API (`POST /api/v1/workflows/{id}/runs`)
// and the console's "Run workflow" form, through the one engine entry point (`startRun`).

export type StartedBy = Extract<Principal, { kind: 'session' } | { kind: 'apiKey' }>;

/**
 * Start a run of the caller's account's workflow (404 for another account's) with `variables` checked
 * against its declared types (400 `VALIDATION_FAILED`, nothing written). With `key`, the same key and
 * variables within 24 h return the first run (`replayed`), another request with it is 409
 * `IDEMPOTENCY_KEY_REUSED`. `audit`: the start is on the audit log (`run.started`, in the run's own
 * transaction, so a replay records nothing more), as the console's form records it.
 */
export async function startWorkflowRun(
  who: StartedBy,
  /** Its id, or the workflow as `requireWorkflow` read it for the caller's account. */
  workflowOrId: string | Workflow,
  variables: Record<string, unknown>,
  opts: { key?: string | undefined; audit?: boolean } = {},
) {
  const workflow = typeof workflowOrId === 'string' ? await requireWorkflow(who.accountId, workflowOrId) : workflowOrId;
  if (workflow.accountId !== who.accountId) throw new Error('a workflow of another account');
  return startRun({
    workflow,
    trigger: 'api',
    variables,
    startedBy: who.userId,
    idempotency: opts.key
      ? { scope: idempotencyScope.workflowStart(workflow.workflowId), key: opts.key, request: { variables } }
      : undefined,
    extra: { keyId: who.kind === 'apiKey' ? who.keyId : undefined },
    ...(opts.audit
      ? {
          alongside: (started) => [
            audited(
              who,
              'run.started',
              { type: 'workflow', id: workflow.workflowId, name: workflow.name, version: workflow.version },
              { executionId: started.executionId },
            ),
          ],
        }
      : {}),
  });
}
