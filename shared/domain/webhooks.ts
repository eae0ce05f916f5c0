import { writeAll } from '../db/transact.ts';
import type { z } from 'zod';
import type { Plan } from '../config.ts';
import { getApiKey } from '../db/entities/api-key.ts';
import { getAccount, memberGens } from '../db/entities/account.ts';
import {
  authMode,
  deleteWebhookItem,
  getWebhook,
  listWebhooks,
  newWebhookItems,
  readStats,
  replaceWebhookItem,
  type Webhook,
} from '../db/entities/webhook.ts';
import { getWorkflow, workflowStillThere } from '../db/entities/workflow.ts';
import { badRequest, forbidden, isConditionFailure, notFound, validationFailed } from '../errors.ts';
import { newId } from '../ids.ts';
import { type CreateWebhookBody, isStandardWebhooksSecret, type UpdateWebhookBody } from '../schemas/webhooks.ts';
import { definitionOf } from '../engine/versions.ts';
import { readsTrigger } from './trigger-context-sync.ts';
import { keyStatus } from './keys.ts';
import { audited, changedFields } from '../db/audited.ts';
import { changedMeanwhile, lostRace } from '../db/conflicts.ts';
import type { Principal } from './principal.ts';
import { caches } from './records.ts';
import { canEditWorkflow, requireWorkflow } from './workflow-access.ts';

type SessionPrincipal = Extract<Principal, { kind: 'session' }>;

/** Webhooks per plan (the spec's limits); undefined = unlimited. */
export const WEBHOOK_LIMITS: Record<Plan, number | undefined> = { free: 0, pro: 3, team: 10, enterprise: undefined };

export { authMode };

/** What the console sees: the mode, never the secret. */
export const webhookView = (w: Webhook) => ({
  id: w.webhookId,
  workflowId: w.workflowId,
  name: w.name,
  apiKeyId: w.apiKeyId ?? null,
  hasSecretKey: w.secretKey !== undefined,
  authMode: authMode(w),
  open: authMode(w) === 'open',
  signatureScheme: authMode(w) === 'hmac' ? (w.signatureScheme ?? 'legacy-hmac') : null,
  variableMapping: w.variableMapping ?? null,
  allowedSourceIps: w.allowedSourceIps,
  enabled: w.enabled,
  createdBy: w.createdBy,
  createdAt: w.createdAt,
  updatedAt: w.updatedAt,
});

/** A webhook the caller may see: admins see the account's, members their own; else 404. */
export async function visibleWebhook(p: SessionPrincipal, webhookId: string): Promise<Webhook> {
  const w = await getWebhook(webhookId);
  if (!w || w.accountId !== p.accountId || (p.role !== 'admin' && w.createdBy !== p.userId)) {
    throw notFound('WEBHOOK_NOT_FOUND', `Webhook ${webhookId} does not exist.`);
  }
  return w;
}

/** A `standard-webhooks` webhook's secret is the specification's `whsec_<base64>`, whichever of the two an update changes. */
function checkSchemeSecret(w: Pick<Webhook, 'signatureScheme' | 'secretKey'>) {
  if (w.signatureScheme === 'standard-webhooks' && w.secretKey !== undefined && !isStandardWebhooksSecret(w.secretKey))
    throw validationFailed([{ path: 'secretKey', message: 'a standard-webhooks secret is whsec_ and the base64 of 24 to 64 bytes' }]);
}

/**
 * A webhook is open (no bound key, no secret: anyone with the URL starts runs) only on purpose: a
 * request that leaves it open must say `authMode: "open"`, unless it was open already and the request
 * changes no credential. A signature scheme needs a secret to sign with. A requested mode must be the one the request results in.
 */
function checkAuthMode(next: Webhook, requested: string | undefined, before?: Webhook) {
  if (next.signatureScheme !== undefined && next.secretKey === undefined)
    throw badRequest('SECRET_REQUIRED', 'signatureScheme needs the secret the sender signs with: send secretKey too.', [
      { path: 'secretKey', message: 'required with signatureScheme' },
    ]);
  const mode = authMode(next);
  if (requested !== undefined && requested !== mode)
    throw validationFailed([{ path: 'authMode', message: `the request makes the webhook ${mode}, not ${requested}` }]);
  if (mode === 'open' && requested !== 'open' && (before === undefined || authMode(before) !== 'open'))
    throw badRequest(
      'CREDENTIALS_REQUIRED',
      'A webhook needs a bound key (apiKeyId) or a secret (secretKey); to let anyone with the URL start runs, send "authMode": "open".',
      [{ path: 'authMode', message: 'neither apiKeyId nor secretKey: send "open" to make an unauthenticated webhook on purpose' }],
    );
}

async function requireEditableWorkflow(p: SessionPrincipal, workflowId: string) {
  const workflow = await requireWorkflow(p.accountId, workflowId);
  if (!canEditWorkflow(p, workflow))
    throw forbidden('NOT_WORKFLOW_EDITOR', 'You need edit permission on the workflow to bind a webhook to it.');
  return workflow;
}

/**
 * The bound key must exist in the account, be active, carry WEBHOOK_TRIGGER, and belong to the
 * webhook's creator, or to the admin who manages a member's webhook (the spec's ownership rule).
 */
async function checkBinding(p: SessionPrincipal, creatorId: string, keyId: string) {
  const [key, gens] = await Promise.all([getApiKey(keyId), memberGens(p.accountId)]);
  const status = key && keyStatus(key, Date.now(), gens(key.ownerId));
  const owners = new Set([creatorId, ...(p.role === 'admin' ? [p.userId] : [])]);
  const problem =
    !key || key.accountId !== p.accountId
      ? 'no such key in this account'
      : status !== 'active'
        ? `the key is ${status}`
        : !key.scopes.includes('WEBHOOK_TRIGGER')
          ? 'the key lacks the WEBHOOK_TRIGGER scope'
          : !owners.has(key.ownerId)
            ? 'the key must belong to the webhook creator (or to the admin managing it)'
            : undefined;
  if (problem) throw badRequest('INVALID_API_KEY_BINDING', `apiKeyId: ${problem}.`, [{ path: 'apiKeyId', message: problem }]);
}

export async function createWebhook(
  p: SessionPrincipal,
  { authMode: requested, ...input }: z.output<typeof CreateWebhookBody>,
  now = Date.now(),
): Promise<Webhook> {
  const w: Webhook = { webhookId: newId('wh'), accountId: p.accountId, ...input, createdBy: p.userId, createdAt: now, updatedAt: now };
  if (readsTrigger(definitionOf((await requireEditableWorkflow(p, input.workflowId)).definition))) w.triggerContext = true;
  if (input.apiKeyId) await checkBinding(p, p.userId, input.apiKeyId);
  checkAuthMode(w, requested);
  checkSchemeSecret(input);
  const account = await getAccount(p.accountId);
  const limit = account ? WEBHOOK_LIMITS[account.plan] : 0;
  const planLimit = () => forbidden('PLAN_LIMIT_REACHED', `The ${account?.plan ?? 'current'} plan allows ${limit} webhooks.`);
  if (limit === 0) throw planLimit();
  try {
    // The count and the webhook in one transaction: parallel creates can never exceed the limit.
    await writeAll([
      ...newWebhookItems(w, limit),
      // A workflow deleted meanwhile takes its webhooks with it (`removeWorkflow`): none may follow.
      workflowStillThere(p.accountId, input.workflowId),
      audited(p, 'webhook.created', webhookObject(w), { workflowId: w.workflowId, authMode: authModeOf(w) }, now),
    ]);
  } catch (e) {
    if (!isConditionFailure(e)) throw e;
    if (!(await getWorkflow(p.accountId, input.workflowId)))
      throw notFound('WORKFLOW_NOT_FOUND', `Workflow ${input.workflowId} does not exist.`);
    throw planLimit();
  }
  return w;
}

export async function updateWebhook(
  p: SessionPrincipal,
  webhookId: string,
  patch: z.output<typeof UpdateWebhookBody>,
  now = Date.now(),
): Promise<Webhook> {
  const w = await visibleWebhook(p, webhookId);
  const workflow = await requireEditableWorkflow(p, w.workflowId);
  if (patch.apiKeyId) await checkBinding(p, w.createdBy, patch.apiKeyId);
  const { clearApiKeyId, variableMapping, authMode: requested, ...rest } = patch;
  // Later than what was read, also within its millisecond: a write conditional on the old `updatedAt` then loses.
  const next: Webhook = { ...w, ...rest, updatedAt: Math.max(now, w.updatedAt + 1) };
  if (readsTrigger(definitionOf(workflow.definition))) next.triggerContext = true;
  else delete next.triggerContext;
  if (variableMapping !== undefined) next.variableMapping = variableMapping ?? undefined;
  if (clearApiKeyId) delete next.apiKeyId;
  // Open on purpose: the bound key, the secret and its scheme go, unless this request sets them (then the mode check refuses it).
  if (requested === 'open') {
    if (rest.apiKeyId === undefined) delete next.apiKeyId;
    if (rest.secretKey === undefined) delete next.secretKey;
    if (rest.signatureScheme === undefined) delete next.signatureScheme;
  }
  checkAuthMode(next, requested, w);
  checkSchemeSecret(next);
  try {
    await writeAll([replaceWebhookItem(next, w.updatedAt), webhookChangeEntry(p, w, next, patch, now)]);
  } catch (e) {
    if (!lostRace(e)) throw e;
    // Lost to another change: 409 while it is there (as a workflow answers), 404 once it is gone.
    if (await getWebhook(webhookId, true)) throw changedMeanwhile('webhook');
    throw notFound('WEBHOOK_NOT_FOUND', 'The webhook was deleted meanwhile.');
  } finally {
    caches.webhooks.delete(webhookId);
  }
  return next;
}

export async function deleteWebhook(p: SessionPrincipal, webhookId: string): Promise<void> {
  const w = await visibleWebhook(p, webhookId);
  await requireEditableWorkflow(p, w.workflowId);
  const deleted = await deleteWebhookItem(p.accountId, webhookId, [
    audited(p, 'webhook.deleted', webhookObject(w), { workflowId: w.workflowId }),
  ]);
  caches.webhooks.delete(webhookId);
  if (!deleted) throw notFound('WEBHOOK_NOT_FOUND', `Webhook ${webhookId} does not exist.`);
}

const webhookObject = (w: Webhook) => ({ type: 'webhook', id: w.webhookId, ...(w.name ? { name: w.name } : {}) });
const authModeOf = (w: Webhook) => (w.apiKeyId ? 'api_key' : w.signatureScheme ? w.signatureScheme : w.secretKey ? 'hmac' : 'open');

/** `webhook.enabled` / `webhook.disabled` when that is all a patch changes, else `webhook.updated` with the fields it set (never their values). */
function webhookChangeEntry(p: SessionPrincipal, w: Webhook, next: Webhook, patch: Record<string, unknown>, now: number) {
  const changed = changedFields(patch);
  if (changed.length === 1 && changed[0] === 'enabled' && next.enabled !== w.enabled)
    return audited(p, next.enabled ? 'webhook.enabled' : 'webhook.disabled', webhookObject(next), {}, now);
  const modeFrom = authModeOf(w);
  const modeTo = authModeOf(next);
  return audited(
    p,
    'webhook.updated',
    webhookObject(next),
    { changed, ...(modeFrom !== modeTo ? { authModeFrom: modeFrom, authModeTo: modeTo } : {}) },
    now,
  );
}

export async function listVisibleWebhooks(p: SessionPrincipal) {
  const items = await listWebhooks(p.accountId, p.role === 'admin' ? undefined : p.userId);
  return { items: items.sort((a, b) => b.createdAt - a.createdAt).map(webhookView), nextCursor: null };
}

export const webhookDetail = async (p: SessionPrincipal, webhookId: string) => webhookView(await visibleWebhook(p, webhookId));

export async function webhookStats(p: SessionPrincipal, webhookId: string, now = Date.now()) {
  await visibleWebhook(p, webhookId);
  return readStats(webhookId, now);
}

/** The webhooks the caller may see (as `listVisibleWebhooks`), each with its last accepted trigger: one stats read each, no second read of the webhook. */
export async function listVisibleWebhooksWithLastTrigger(p: SessionPrincipal, now = Date.now()) {
  const { items } = await listVisibleWebhooks(p);
  const stats = await Promise.all(items.map((w) => readStats(w.id, now)));
  return items.map((w, i) => ({ ...w, lastTriggeredAt: stats[i]?.lastTriggeredAt ?? null }));
}
