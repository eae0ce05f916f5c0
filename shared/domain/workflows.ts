import { deleteWorkflow, listWorkflows, putWorkflow, type Workflow, type WorkflowCode, workflowChanged } from '../db/entities/workflow.ts';
import { claimWorkflowKey, releaseWorkflowKey } from '../db/entities/workflow-keys.ts';
import { getUser, listUsers } from '../db/entities/user.ts';
import { deleteWebhookItem, listWebhooks } from '../db/entities/webhook.ts';
import { listChannelItems } from '../db/entities/channel.ts';
import { channelKinds } from '../channels/index.ts';
import { readsTrigger, syncTriggerContext } from './trigger-context-sync.ts';
import { caches } from './records.ts';
import { definitionOf, forgetWorkflow } from '../engine/versions.ts';
import type { WorkflowDefinition } from '../engine/definition.ts';
import { asksPeople, stepsWithPaths } from '../engine/every-step.ts';
import { checkSecretUse, maskDefinition, restoreSecrets } from './definition-secrets.ts';
import { checkNotificationTargets } from './notification-targets.ts';
import { removeWorkflowSchedules } from './schedules.ts';
import { badRequest, forbidden, notFound, validationFailed } from '../errors.ts';
import { type Actor, canEditWorkflow, requireWorkflow } from './workflow-access.ts';
import { encodeCursor, decodeCursor } from '../db/cursor.ts';
import { newId } from '../ids.ts';
import { audited, changedFields } from '../db/audited.ts';

export const workflowView = (w: Workflow) => ({
  id: w.workflowId,
  name: w.name,
  description: w.description ?? null,
  // Secrets are write-only: masked for every reader, admins included.
  definition: maskDefinition(definitionOf(w.definition)),
  recovery: w.recovery,
  ownerId: w.ownerId,
  editors: w.editors,
  createdAt: w.createdAt,
  updatedAt: w.updatedAt,
  version: w.version,
  // Managed by code: its key and where its file lives (docs/workflows-as-code.md).
  code: w.code ? { key: w.code.key, origin: w.code.origin ?? null } : null,
});

/** The v1 summary: variables with defaults and the steps' id, type and title; never notification secrets. */
export function workflowSummary(w: Workflow) {
  const { variables, steps } = definitionOf(w.definition);
  return {
    workflowId: w.workflowId,
    name: w.name,
    description: w.description ?? null,
    variables: Object.fromEntries(Object.entries(variables ?? {}).map(([k, v]) => [k, { type: v.type, default: v.default ?? null }])),
    steps: steps.map((s) => ({ id: s.id, type: s.type, title: s.title ?? null })),
    recovery: w.recovery,
    createdAt: w.createdAt,
    updatedAt: w.updatedAt,
  };
}

export async function checkEditors(accountId: string, editors: readonly string[]) {
  const users = await Promise.all(editors.map((id) => getUser(accountId, id)));
  const missing = editors.filter((_, i) => !users[i]);
  if (missing.length)
    throw badRequest(
      'INVALID_EDITORS',
      'Editors must be users of this account.',
      missing.map((id) => ({ path: 'editors', message: `${id} is not a user of this account` })),
    );
}

/**
 * A quorum (`minApprovals` above 1) needs as many users who may decide: the named users and the
 * account's users of the listed roles, counted when the definition is saved (400 otherwise).
 */
async function checkQuorums(accountId: string, definition: WorkflowDefinition) {
  // Approvals inside a container count too (`steps.<i>.steps.<j>`).
  const quorums = stepsWithPaths(definition).flatMap(({ step: s, path }) =>
    asksPeople(s) && (s.minApprovals ?? 1) > 1 ? [{ s, path }] : [],
  );
  if (quorums.length === 0) return;
  const users = await listUsers(accountId);
  const errors = quorums.flatMap(({ s, path }) => {
    const eligible = users.filter((u) => s.reviewers.includes(`user:${u.userId}`) || s.reviewers.includes(`role:${u.role}`)).length;
    const message = `must be at most ${eligible}, the users of this account who may decide this approval`;
    return (s.minApprovals ?? 1) > eligible ? [{ path: `definition.${path}.minApprovals`, message }] : [];
  });
  if (errors.length) throw validationFailed(errors);
}

/**
 * Approval steps' `notify` entries name channels of the account, checked when the definition is
 * saved (400 with the path); a Slack conversation in `to` only on a Slack channel. A channel deleted
 * later leaves the step sending nothing on it (the notify worker logs that).
 */
async function checkChannels(accountId: string, definition: WorkflowDefinition) {
  // Approvals inside a container too (`steps.<i>.steps.<j>`).
  const uses = stepsWithPaths(definition).flatMap(({ step: s, path: at }) =>
    asksPeople(s)
      ? [
          ...(s.notify ?? []).map((n, j) => ({ n, path: `definition.${at}.notify.${j}` })),
          // An escalation's own `notify` (docs/approvals-and-channels.md "Reminders and escalation").
          ...(s.escalate?.notify ?? []).map((n, j) => ({ n, path: `definition.${at}.escalate.notify.${j}` })),
        ]
      : [],
  );
  if (uses.length === 0) return;
  const channels = new Map((await listChannelItems(accountId)).map((c) => [c.name.toLowerCase(), c]));
  const errors = uses.flatMap(({ n, path }) => {
    const c = channels.get(n.channel.toLowerCase());
    if (!c) return [{ path: `${path}.channel`, message: `no channel named ${n.channel} in this account (POST /api/channels)` }];
    if (typeof n.to === 'string' && !channelKinds[c.type].conversations)
      return [{ path: `${path}.to`, message: `a ${c.type} channel sends to reviewers: a list of user:<id> or role:<role>` }];
    return [];
  });
  if (errors.length) throw validationFailed(errors);
}

/**
 * What saving `definition` would check beyond its schema (quorums, channels, notification targets, masked secrets against
 * `current`, secret use), saving nothing: the editor's live validation. Throws as the save would.
 */
export async function checkDefinition(p: Actor, definition: WorkflowDefinition, current: WorkflowDefinition | undefined) {
  await checkQuorums(p.accountId, definition);
  await checkChannels(p.accountId, definition);
  await checkNotificationTargets(definition);
  await checkSecretUse(p, restoreSecrets(definition, current));
}

export type WorkflowInput = { name: string; description?: string; definition: WorkflowDefinition; recovery: boolean; editors: string[] };

/** A new workflow; with `code`, managed by code under that key (refused with 409 when the key is taken meanwhile). */
export async function createWorkflow(p: Actor, input: WorkflowInput, now = Date.now(), code?: WorkflowCode): Promise<Workflow> {
  await checkEditors(p.accountId, input.editors);
  await checkQuorums(p.accountId, input.definition);
  await checkChannels(p.accountId, input.definition);
  await checkNotificationTargets(input.definition);
  const definition = restoreSecrets(input.definition, undefined);
  await checkSecretUse(p, definition);
  const w: Workflow = {
    workflowId: newId('wf'),
    accountId: p.accountId,
    ...input,
    definition,
    editors: [...new Set(input.editors)],
    ownerId: p.userId,
    updatedBy: p.userId,
    createdAt: now,
    updatedAt: now,
    version: 1,
    ...(code ? { code } : {}),
  };
  await putWorkflow(w, undefined, [
    audited(p, 'workflow.created', { type: 'workflow', id: w.workflowId, name: w.name, version: 1 }, code ? { key: code.key } : {}, now),
    ...(code ? [claimWorkflowKey(p.accountId, code.key, w.workflowId)] : []),
  ]);
  return w;
}

/**
 * A new version of the workflow. With `expectedVersion` (an editor's form: the version it was opened
 * on), a workflow saved by someone else meanwhile is refused with 409 `WORKFLOW_CHANGED`, as a race
 * between the read and the write is. `restoredFrom`: the version whose content this is (the audit log
 * says `workflow.restored`).
 */
export async function updateWorkflow(
  p: Actor,
  workflowId: string,
  patch: Partial<WorkflowInput>,
  now = Date.now(),
  opts: { restoredFrom?: number; expectedVersion?: number; code?: WorkflowCode } = {},
): Promise<Workflow> {
  const w = await requireWorkflow(p.accountId, workflowId);
  if (!canEditWorkflow(p, w)) throw forbidden('NOT_WORKFLOW_EDITOR', 'Only the owner, editors and admins may change this workflow.');
  if (opts.expectedVersion !== undefined && opts.expectedVersion !== w.version) throw workflowChanged();
  if (patch.editors) await checkEditors(p.accountId, patch.editors);
  if (patch.definition) await checkQuorums(p.accountId, patch.definition);
  if (patch.definition) await checkChannels(p.accountId, patch.definition);
  if (patch.definition) await checkNotificationTargets(patch.definition);
  const current = definitionOf(w.definition);
  const definition = patch.definition && restoreSecrets(patch.definition, current);
  if (definition) await checkSecretUse(p, definition);
  const next: Workflow = {
    ...w,
    ...patch,
    ...(definition ? { definition } : {}),
    ...(patch.editors ? { editors: [...new Set(patch.editors)] } : {}),
    updatedAt: now,
    updatedBy: p.userId,
    version: w.version + 1,
    ...(opts.code ? { code: opts.code } : {}),
  };
  const entry = audited(
    p,
    opts.restoredFrom === undefined ? 'workflow.updated' : 'workflow.restored',
    { type: 'workflow', id: workflowId, name: next.name, version: next.version },
    { changed: changedFields(patch), ...(opts.restoredFrom === undefined ? {} : { restoredFrom: opts.restoredFrom }) },
    now,
  );
  const claim = opts.code && opts.code.key !== w.code?.key ? [claimWorkflowKey(p.accountId, opts.code.key, workflowId)] : [];
  await putWorkflow(next, w.version, [entry, ...claim]);
  forgetWorkflow(p.accountId, workflowId);
  if (definition && readsTrigger(definition) !== readsTrigger(current)) await syncTriggerContext(p.accountId, workflowId, definition);
  return next;
}

export async function removeWorkflow(p: Actor, workflowId: string): Promise<void> {
  const w = await requireWorkflow(p.accountId, workflowId);
  if (!canEditWorkflow(p, w)) throw forbidden('NOT_WORKFLOW_EDITOR', 'Only the owner, editors and admins may delete this workflow.');
  const entry = audited(p, 'workflow.deleted', { type: 'workflow', id: workflowId, name: w.name, version: w.version });
  const release = w.code ? [releaseWorkflowKey(p.accountId, w.code.key)] : [];
  if (!(await deleteWorkflow(p.accountId, workflowId, [entry, ...release])))
    throw notFound('WORKFLOW_NOT_FOUND', `Workflow ${workflowId} does not exist.`);
  forgetWorkflow(p.accountId, workflowId);
  // Its webhooks go with it: they cannot be bound to another workflow, and their URLs answer 404 now
  // (a trigger finds its webhook gone before it looks at a workflow). A webhook created meanwhile fails its create (a condition on the workflow).
  const bound = (await listWebhooks(p.accountId)).filter((w) => w.workflowId === workflowId);
  await Promise.all(
    bound.map(async (w) => {
      await deleteWebhookItem(p.accountId, w.webhookId);
      caches.webhooks.delete(w.webhookId);
    }),
  );
  // And its schedules, with their timers (one created meanwhile fails its create: a condition on the workflow).
  await removeWorkflowSchedules(p.accountId, workflowId);
}

/** A page of the account's workflows, newest first; every account member may view them. */
export async function pageWorkflows(accountId: string, limit: number, cursor: string | undefined) {
  const binding = `workflows:${accountId}`;
  const page = await listWorkflows(accountId, limit, decodeCursor(cursor, binding));
  return { items: page.items, nextCursor: encodeCursor(page.lastKey, binding) };
}
