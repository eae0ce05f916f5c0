import { TtlCache } from '../cache.ts';
import type { Execution } from '../db/entities/execution.ts';
import type { WorkflowDefinition } from './definition.ts';
import { getWorkflow, getWorkflowVersion, type Workflow, WorkflowVersion } from '../db/entities/workflow.ts';
import { RECORD_TTL_MS } from '../db/retention.ts';

/**
 * The definitions runs execute, per function instance. A workflow version never changes, so it is
 * cached for as long as the instance lives (bounded, oldest evicted first): a warm worker reads no
 * workflow at all. A run started by reference (a webhook's) takes the workflow as it is when first
 * picked up, through a 5 s cache like the trigger's records (an edit reaches runs started in other
 * instances within 5 s, at once in the instance that made it).
 */
const versions = new TtlCache<WorkflowVersion | undefined>(Number.POSITIVE_INFINITY, 500);
export const currentWorkflows = new TtlCache<Workflow | undefined>(RECORD_TTL_MS, 500);

const versionId = (accountId: string, workflowId: string, version: number) => `${accountId}/${workflowId}/${version}`;

/** One version of a workflow, or undefined if it does not exist. */
export async function workflowVersion(accountId: string, workflowId: string, version: number): Promise<WorkflowVersion | undefined> {
  const id = versionId(accountId, workflowId, version);
  const hit = versions.peek(id);
  if (hit?.value) return hit.value;
  let v = await getWorkflowVersion(accountId, workflowId, version);
  // A workflow saved before versions were stored has no version item: its current state is that version.
  if (!v) {
    const w = await getWorkflow(accountId, workflowId);
    if (w?.version === version) v = WorkflowVersion.parse(w);
  }
  if (v) versions.set(id, v);
  return v;
}

/** The workflow as it is now (within the cache's 5 s), for a run that starts by reference. */
export async function currentWorkflow(accountId: string, workflowId: string): Promise<Workflow | undefined> {
  const w = await currentWorkflows.get(`${accountId}/${workflowId}`, () => getWorkflow(accountId, workflowId));
  if (w) rememberVersion(w);
  return w;
}

/** A run started with its workflow at hand: its version is known without a read. */
export const rememberVersion = (w: Workflow) => versions.set(versionId(w.accountId, w.workflowId, w.version), WorkflowVersion.parse(w));

/** The instance that changed or deleted a workflow sees it at once. */
export const forgetWorkflow = (accountId: string, workflowId: string) => currentWorkflows.delete(`${accountId}/${workflowId}`);

/** The definition a run executes; undefined before a run started by reference was picked up, or if its version is gone. */
export async function runDefinition(
  e: Pick<Execution, 'accountId' | 'workflowId' | 'workflowVersion'>,
): Promise<WorkflowDefinition | undefined> {
  return e.workflowVersion === undefined ? undefined : (await workflowVersion(e.accountId, e.workflowId, e.workflowVersion))?.definition;
}
