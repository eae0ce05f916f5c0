import * as z from 'zod';
import { TtlCache } from '../cache.ts';
import type { Execution } from '../db/entities/execution.ts';
import {
  getWorkflow,
  getWorkflowVersion,
  type StoredDefinition,
  type Workflow,
  type WorkflowVersion,
  versionOf,
} from '../db/entities/workflow.ts';
import { RECORD_TTL_MS } from '../db/retention.ts';
import type { WorkflowDefinition } from './definition.ts';

/**
 * A stored definition (opaque in the db layer) as the engine reads it. It was validated against the
 * definition schema when it was saved (defaults applied, expressions compiled), so it is not parsed
 * again: only its shape is checked, as the entity did before it was opaque.
 */
const SavedDefinition = z.custom<WorkflowDefinition>(
  (v) => typeof v === 'object' && v !== null && Array.isArray((v as { steps?: unknown }).steps),
  'not a stored workflow definition',
);
export const definitionOf = (stored: StoredDefinition): WorkflowDefinition => SavedDefinition.parse(stored);

/** A workflow, or one version of it, with its definition narrowed to the engine's type. */
export type Defined<T extends { definition: StoredDefinition }> = Omit<T, 'definition'> & { definition: WorkflowDefinition };
export const defined = <T extends { definition: StoredDefinition }>(w: T): Defined<T> => ({ ...w, definition: definitionOf(w.definition) });

/**
 * The definitions runs execute, per function instance. A workflow version never changes, so it is
 * cached for as long as the instance lives (bounded, oldest evicted first): a warm worker reads no
 * workflow at all. A run started by reference (a webhook's) takes the workflow as it is when first
 * picked up, through a 5 s cache like the trigger's records (an edit reaches runs started in other
 * instances within 5 s, at once in the instance that made it).
 */
const versions = new TtlCache<Defined<WorkflowVersion> | undefined>(Number.POSITIVE_INFINITY, 500);
export const currentWorkflows = new TtlCache<Defined<Workflow> | undefined>(RECORD_TTL_MS, 500);

const versionId = (accountId: string, workflowId: string, version: number) => `${accountId}/${workflowId}/${version}`;

/** One version of a workflow, or undefined if it does not exist. */
export async function workflowVersion(
  accountId: string,
  workflowId: string,
  version: number,
): Promise<Defined<WorkflowVersion> | undefined> {
  const id = versionId(accountId, workflowId, version);
  const hit = versions.peek(id);
  if (hit?.value) return hit.value;
  let v = await getWorkflowVersion(accountId, workflowId, version);
  // A workflow saved before versions were stored has no version item: its current state is that version.
  if (!v) {
    const w = await getWorkflow(accountId, workflowId);
    if (w?.version === version) v = versionOf(w);
  }
  const read = v && defined(v);
  if (read) versions.set(id, read);
  return read;
}

/** The workflow as it is now (within the cache's 5 s), for a run that starts by reference. */
export async function currentWorkflow(accountId: string, workflowId: string): Promise<Defined<Workflow> | undefined> {
  const w = await currentWorkflows.get(`${accountId}/${workflowId}`, async () => {
    const read = await getWorkflow(accountId, workflowId);
    return read && defined(read);
  });
  if (w) rememberVersion(w);
  return w;
}

/** A run started with its workflow at hand: its version is known without a read. */
export const rememberVersion = (w: Workflow) => versions.set(versionId(w.accountId, w.workflowId, w.version), defined(versionOf(w)));

/** The instance that changed or deleted a workflow sees it at once. */
export const forgetWorkflow = (accountId: string, workflowId: string) => currentWorkflows.delete(`${accountId}/${workflowId}`);

/** The definition a run executes; undefined before a run started by reference was picked up, or if its version is gone. */
export async function runDefinition(
  e: Pick<Execution, 'accountId' | 'workflowId' | 'workflowVersion'>,
): Promise<WorkflowDefinition | undefined> {
  return e.workflowVersion === undefined ? undefined : (await workflowVersion(e.accountId, e.workflowId, e.workflowVersion))?.definition;
}
