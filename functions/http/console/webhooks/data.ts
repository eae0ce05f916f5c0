import type { ConsoleSession } from '../../../../shared/console/auth.ts';
import { pageExecutions } from '../../../../shared/domain/executions.ts';
import { listKeys } from '../../../../shared/domain/keys.ts';
import { workflowFilterChoices, workflowNamesOf } from '../../../../shared/domain/run-list.ts';
import { listVisibleWebhooksWithLastTrigger, webhookDetail, webhookStats } from '../../../../shared/domain/webhooks.ts';
import { AppError } from '../../../../shared/errors.ts';
import { httpStatus } from '../../../../shared/http-status.ts';
import type { KeyChoice } from './form.tsx';
import { errorsAt, type FormErrors, type WebhookFormValues } from './form-data.ts';

// What the webhook pages read, each through the domain functions the API's webhook routes call.

type Principal = ConsoleSession['principal'];
export type WebhookShown = Awaited<ReturnType<typeof webhookDetail>> & { workflowName: string };

/** Runs of the workflow read to find the webhook's recent ones (webhook-started, newest first). */
const RUNS_READ = 50;
/** Recent runs the page lists. */
export const RECENT_RUNS = 10;

/**
 * The keys a webhook may be bound to, as the API checks them: active, with WEBHOOK_TRIGGER, the
 * webhook creator's or the admin's own (a new webhook's creator is the caller: their own keys only).
 */
export async function keyChoices(p: Principal, creatorId = p.userId): Promise<KeyChoice[]> {
  const owners = new Set([creatorId, ...(p.role === 'admin' ? [p.userId] : [])]);
  const { items } = await listKeys(p, creatorId !== p.userId && p.role === 'admin');
  return items
    .filter((k) => k.status === 'active' && k.scopes.includes('WEBHOOK_TRIGGER') && owners.has(k.ownerId))
    .map((k) => ({ id: k.id, name: k.name, mine: k.ownerId === p.userId }));
}

export const workflowChoicesFor = async (p: Principal) => (await workflowFilterChoices(p.accountId)).items;

export async function shownWebhook(p: Principal, id: string): Promise<WebhookShown> {
  const w = await webhookDetail(p, id);
  const names = await workflowNamesOf(p.accountId, [w.workflowId]);
  return { ...w, workflowName: names.get(w.workflowId) ?? w.workflowId };
}

/** Everything the webhook's page shows: the webhook, its stats (the API's), its recent runs. */
export async function webhookPageData(p: Principal, id: string) {
  const [w, stats] = await Promise.all([shownWebhook(p, id), webhookStats(p, id)]);
  const runs = await pageExecutions(p.accountId, { workflowId: w.workflowId, trigger: 'webhook' }, RUNS_READ, undefined);
  return { w, stats, runs: runs.items.filter((r) => r.webhookId === id).slice(0, RECENT_RUNS) };
}

/** The list: every visible webhook with its last trigger (the API's stats) and its workflow's name. */
export async function listData(p: Principal) {
  const items = await listVisibleWebhooksWithLastTrigger(p);
  const names = await workflowNamesOf(
    p.accountId,
    items.map((w) => w.workflowId),
  );
  return items.map((w) => ({ ...w, workflowName: names.get(w.workflowId) ?? w.workflowId }));
}

/**
 * A domain refusal of the form, at its fields: the status it answers with and the errors (the API's
 * `errors` where it gives them, else its detail at the field its code is about). Anything else is thrown on.
 */
export function refusalAt(e: unknown, v: WebhookFormValues): { status: number; errors: FormErrors } {
  if (!(e instanceof AppError) || !['invalid', 'forbidden', 'not_found', 'conflict'].includes(e.kind) || e.code === 'WEBHOOK_NOT_FOUND')
    throw e;
  const listed = (e.extra.body?.errors as { path: string; message: string }[] | undefined) ?? [];
  const byCode: Record<string, string> = {
    NOT_WORKFLOW_EDITOR: 'workflowId',
    WORKFLOW_NOT_FOUND: 'workflowId',
    INVALID_API_KEY_BINDING: 'apiKeyId',
    PLAN_LIMIT_REACHED: 'form',
    // Saved by another meanwhile: the form again, with what is stored now a reload away.
    CONFLICT: 'form',
  };
  const errors = listed.length ? errorsAt(v, listed) : errorsAt(v, [{ path: byCode[e.code] ?? '(body)', message: e.message }]);
  return { status: httpStatus(e), errors };
}
