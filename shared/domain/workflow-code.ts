import { isDeepStrictEqual } from 'node:util';
import { getWorkflow, type Workflow, type WorkflowCode } from '../db/entities/workflow.ts';
import { listCodeWorkflows, markWorkflowCode, workflowIdByKey } from '../db/entities/workflow-keys.ts';
import { audited, type Via } from '../db/audited.ts';
import type { WorkflowDefinition } from '../engine/definition.ts';
import { definitionOf, forgetWorkflow } from '../engine/versions.ts';
import { conflict, forbidden, notFound, validationFailed } from '../errors.ts';
import { WorkflowKey } from '../schemas/workflow-file.ts';
import { maskDefinition, restoreSecrets } from './definition-secrets.ts';
import { type Actor, canEditWorkflow, requireWorkflow } from './workflow-access.ts';
import { checkDefinition, checkEditors, createWorkflow, removeWorkflow, updateWorkflow, type WorkflowInput } from './workflows.ts';

/**
 * Workflows as code (docs/workflows-as-code.md): a workflow file applied by its key. The same function
 * answers `flowgate plan` (`dryRun`: every check a save makes, nothing written) and `flowgate apply`, and
 * the stack's own workflows (infra: the workflows custom resource). A file equal to what is stored
 * (secrets compared as stored: a mask a view showed keeps the stored one) changes nothing and makes no
 * version, so applying a folder twice is applying it once.
 */

/** What a file says of a workflow, as a plan shows it (secrets masked). */
export type CodeContent = {
  name: string;
  description: string | null;
  recovery: boolean;
  editors: string[];
  definition: unknown;
};
export type CodeAction = 'create' | 'update' | 'unchanged';
export type CodeChange = {
  key: string;
  action: CodeAction;
  workflowId: string | null;
  /** The settings that differ (`key`: the workflow is taken under code). */
  changed: string[];
  before: CodeContent | null;
  after: CodeContent;
  /** The workflow's version after the call (null: a dry run's create). */
  version: number | null;
};
export type CodeInput = WorkflowInput & {
  /** Where the file lives, as the applier says (a repository and path): the console shows it. */
  origin?: string;
  /** Export: take this workflow, made in the console or the API, under code with this key. */
  adopt?: string;
};

/** Changes made as code are recorded with the CLI's channel, whoever signed in (docs/audit.md). */
export const viaCli = <P extends Actor & { via?: Via }>(p: P): P => ({ ...p, via: { ...p.via, channel: 'cli' } });

const FIELDS = ['name', 'description', 'recovery', 'editors', 'definition'] as const;

const contentOf = (w: Pick<Workflow, 'name' | 'description' | 'recovery' | 'editors'>, definition: WorkflowDefinition): CodeContent => ({
  name: w.name,
  description: w.description ?? null,
  recovery: w.recovery,
  editors: [...new Set(w.editors)],
  definition: maskDefinition(definition),
});

/** JSON as stored: no undefined members, key order irrelevant. */
const same = (a: unknown, b: unknown) => isDeepStrictEqual(JSON.parse(JSON.stringify(a ?? null)), JSON.parse(JSON.stringify(b ?? null)));

const keyTaken = (key: string) =>
  conflict('WORKFLOW_KEY_TAKEN', `The key ${key} belongs to another workflow of this account; choose another key.`);

/** The workflow this key names, or, when adopting, the one to take under it (409 when either has another key). */
async function target(p: Actor, key: string, adopt: string | undefined): Promise<Workflow | undefined> {
  const id = await workflowIdByKey(p.accountId, key);
  const keyed = id ? await getWorkflow(p.accountId, id) : undefined;
  if (!adopt || keyed?.workflowId === adopt) return keyed;
  if (keyed) throw keyTaken(key);
  const w = await requireWorkflow(p.accountId, adopt);
  if (w.code && w.code.key !== key) throw keyTaken(key);
  return w;
}

/** Create, update or leave the workflow with this key as the file says; with `dryRun`, only say which (after every check). */
export async function applyWorkflowFile(
  p: Actor,
  key: string,
  input: CodeInput,
  opts: { dryRun: boolean },
  now = Date.now(),
): Promise<CodeChange> {
  const valid = WorkflowKey.safeParse(key);
  if (!valid.success) throw validationFailed([{ path: 'key', message: valid.error.issues[0]?.message ?? 'not a workflow key' }]);
  const code: WorkflowCode = { key, ...(input.origin ? { origin: input.origin } : {}) };
  const content: WorkflowInput = {
    name: input.name,
    ...(input.description !== undefined ? { description: input.description } : {}),
    definition: input.definition,
    recovery: input.recovery,
    editors: [...new Set(input.editors)],
  };
  const w = await target(p, key, input.adopt);
  if (!w) {
    const after = contentOf(content, input.definition);
    if (opts.dryRun) {
      await checkEditors(p.accountId, content.editors);
      await checkDefinition(p, input.definition, undefined);
      return { key, action: 'create', workflowId: null, changed: [...FIELDS], before: null, after, version: null };
    }
    const created = await createWorkflow(p, content, now, code);
    return { key, action: 'create', workflowId: created.workflowId, changed: [...FIELDS], before: null, after, version: created.version };
  }
  if (!canEditWorkflow(p, w)) throw forbidden('NOT_WORKFLOW_EDITOR', 'Only the owner, editors and admins may change this workflow.');
  const current = definitionOf(w.definition);
  const definition = restoreSecrets(input.definition, current);
  const next = { ...content, definition, description: content.description };
  const changed = FIELDS.filter((f) => !same(next[f], f === 'definition' ? current : w[f]));
  const before = contentOf(w, current);
  const after = contentOf(content, definition);
  const change = (action: CodeAction, fields: string[], version: number | null): CodeChange => ({
    key,
    action,
    workflowId: w.workflowId,
    changed: fields,
    before,
    after,
    version,
  });
  if (changed.length === 0) {
    if (w.code) return change('unchanged', [], w.version);
    if (!opts.dryRun) {
      await markWorkflowCode(w, code, [
        audited(p, 'workflow.updated', { type: 'workflow', id: w.workflowId, name: w.name, version: w.version }, { changed: ['key'] }, now),
      ]);
      forgetWorkflow(p.accountId, w.workflowId);
    }
    return change('update', ['key'], w.version);
  }
  if (opts.dryRun) {
    if (changed.includes('editors')) await checkEditors(p.accountId, content.editors);
    if (changed.includes('definition')) await checkDefinition(p, input.definition, current);
    return change('update', changed, w.version);
  }
  // The definition as the file has it: the update restores the secrets its masks keep.
  const patch = Object.fromEntries(changed.map((f) => [f, f === 'definition' ? input.definition : next[f]])) as Partial<WorkflowInput>;
  const saved = await updateWorkflow(p, w.workflowId, patch, now, { expectedVersion: w.version, code });
  return change('update', changed, saved.version);
}

/** Delete the workflow with this key (`flowgate apply --prune`): 404 when no workflow has it. */
export async function removeWorkflowByKey(p: Actor, key: string): Promise<{ workflowId: string }> {
  const id = await workflowIdByKey(p.accountId, key);
  if (!id) throw notFound('WORKFLOW_NOT_FOUND', `No workflow has the key ${key}.`);
  await removeWorkflow(p, id);
  return { workflowId: id };
}

/** A folder's workflow, as the stack's workflows carry it: its key and its file's settings. */
export type FolderWorkflow = { key: string; settings: CodeInput };

/**
 * Apply a whole folder (the stack's workflows, docs/workflows-as-code.md "With the stack"): each file as
 * `flowgate apply` does, then with `prune` delete the workflows managed by code that the folder lacks.
 */
export async function applyWorkflowFolder(p: Actor, folder: readonly FolderWorkflow[], opts: { prune: boolean }) {
  const changes: CodeChange[] = [];
  for (const w of folder) changes.push(await applyWorkflowFile(p, w.key, w.settings, { dryRun: false }));
  const deleted: string[] = [];
  if (opts.prune) {
    const keys = new Set(folder.map((w) => w.key));
    for (const { key } of await listCodeWorkflows(p.accountId))
      if (!keys.has(key)) {
        await removeWorkflowByKey(p, key);
        deleted.push(key);
      }
  }
  return { changes, deleted };
}
