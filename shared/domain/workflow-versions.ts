import { listWorkflowVersions, type VersionEntry, type Workflow } from '../db/entities/workflow.ts';
import { decodeCursor, encodeCursor } from '../db/cursor.ts';
import { workflowVersion } from '../engine/versions.ts';
import { notFound } from '../errors.ts';
import { maskDefinition } from './definition-secrets.ts';
import type { Principal } from './principal.ts';
import { type Actor, requireWorkflow } from './workflow-access.ts';
import { updateWorkflow } from './workflows.ts';

// A workflow's versions: each save's immutable copy (`WFV#<workflow>#<version>`), who saved it and when.

/** A version as the API and the console show it: its number, when and by whom (a user id; null when not recorded). */
export const versionEntryView = (v: VersionEntry) => ({
  version: v.version,
  createdAt: v.createdAt ?? null,
  createdBy: v.createdBy ?? null,
});

export const noVersion = (workflowId: string, version: number) =>
  notFound('WORKFLOW_VERSION_NOT_FOUND', `Workflow ${workflowId} has no version ${version}.`);

/**
 * A page of the workflow's versions, newest first (every member of the account may read them, as the
 * workflow). A workflow saved before versions were kept has no item for its current version: it is
 * listed from the workflow itself.
 */
export async function pageWorkflowVersions(p: Pick<Principal, 'accountId'>, workflowId: string, limit: number, cursor: string | undefined) {
  const binding = `workflow-versions:${p.accountId}:${workflowId}`;
  // The cursor first: a bad one is refused before any read starts (none is left unawaited).
  const startKey = decodeCursor(cursor, binding);
  const [w, page] = await Promise.all([
    requireWorkflow(p.accountId, workflowId),
    listWorkflowVersions(p.accountId, workflowId, limit, startKey),
  ]);
  const items = page.items.map(versionEntryView);
  if (!cursor && items[0]?.version !== w.version)
    items.unshift({ version: w.version, createdAt: w.updatedAt, createdBy: w.updatedBy ?? null });
  return { workflow: w, items, nextCursor: encodeCursor(page.lastKey, binding) };
}

/** One version of the workflow with its definition (secrets masked, as every read masks them), or 404. */
export async function readWorkflowVersion(p: Pick<Principal, 'accountId'>, workflowId: string, version: number, w?: Workflow) {
  const workflow = w ?? (await requireWorkflow(p.accountId, workflowId));
  const v = version >= 1 && version <= workflow.version ? await workflowVersion(p.accountId, workflowId, version) : undefined;
  if (!v) throw noVersion(workflowId, version);
  return {
    ...versionEntryView({
      version,
      createdAt: v.createdAt ?? (version === workflow.version ? workflow.updatedAt : undefined),
      createdBy: v.createdBy,
    }),
    definition: maskDefinition(v.definition),
    recovery: v.recovery,
  };
}

/**
 * "Restore this version": a new version with the old one's definition (its secrets as they were
 * then), through the same checks as any save; refused with 409 when the workflow is no longer at
 * `expectedVersion` (the version the confirmation showed).
 */
export async function restoreWorkflowVersion(p: Actor, workflowId: string, version: number, expectedVersion?: number) {
  const w = await requireWorkflow(p.accountId, workflowId);
  const v = version >= 1 && version <= w.version ? await workflowVersion(p.accountId, workflowId, version) : undefined;
  if (!v) throw noVersion(workflowId, version);
  return updateWorkflow(p, workflowId, { definition: v.definition }, Date.now(), {
    expectedVersion: expectedVersion ?? w.version,
    restoredFrom: version,
  });
}
