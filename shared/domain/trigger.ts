import { randomUUID } from 'node:crypto';
import { storage } from '../clients.ts';
import { config } from '../config.ts';
import { countKeyUse } from '../db/entities/api-key.ts';
import type { Execution } from '../db/entities/execution.ts';
import { idempotencyScope } from '../db/entities/idempotency.ts';
import { authMode, type Webhook } from '../db/entities/webhook.ts';
import { runInline, runsInline } from '../engine/inline.ts';
import { laneOf } from '../engine/lanes.ts';
import { startRun } from '../engine/runs.ts';
import { currentWorkflow } from '../engine/versions.ts';
import { emit } from '../metrics.ts';
import { triggerContextOf } from './trigger-context.ts';

/** Payloads up to this size stay on the execution record; larger ones go to the artifacts bucket. */
export const INLINE_PAYLOAD_BYTES = 32 * 1024;

/** The request kept for audit and manual rerun: inline, or (up to the 1 MiB limit) in S3 by reference. */
async function storablePayload(accountId: string, webhookId: string, payload: unknown, now: number) {
  const text = JSON.stringify(payload);
  if (Buffer.byteLength(text) <= INLINE_PAYLOAD_BYTES) return { payload };
  const bucket = config().ARTIFACTS_BUCKET;
  const payloadRef = `${accountId}/payloads/${webhookId}/${now}-${randomUUID()}.json`;
  const { PutObjectCommand } = await import('../s3.ts');
  await (await storage()).send(new PutObjectCommand({ Bucket: bucket, Key: payloadRef, Body: text, ContentType: 'application/json' }));
  return { payloadRef };
}

/**
 * The spec's variable mapping: without a mapping, top-level string/number/boolean fields become
 * variables; with one, each variable takes the named top-level field as is; an absent field leaves
 * the template default.
 */
export function mapVariables(payload: Record<string, unknown>, mapping: Record<string, string> | undefined): Record<string, unknown> {
  if (!mapping) {
    return Object.fromEntries(Object.entries(payload).filter(([, v]) => ['string', 'number', 'boolean'].includes(typeof v)));
  }
  return Object.fromEntries(
    Object.entries(mapping)
      .filter(([, field]) => Object.hasOwn(payload, field))
      .map(([name, field]) => [name, payload[field]]),
  );
}

/** A trigger past `webhook-auth` and the body checks: what the run is started from. */
export type Trigger = {
  webhook: Webhook;
  /** The bound key it was called with (`api_key` mode). */
  keyId?: string;
  sourceIp: string;
  payload: Record<string, unknown>;
  /** The caller's `Idempotency-Key` (legacy-hmac, key-bound and open webhooks only): one run per key for 24 h. */
  idempotencyKey?: string;
  deliveryId?: string;
  /** The request's headers (for `$trigger`, kept only where the workflow reads it). */
  headers?: Record<string, string | undefined>;
  /**
   * The account's requests in the current rate window, as its rate limit counted them (`takeAccountBudget`'s
   * `used`): a heavy account's run goes to the heavy lane (shared/engine/lanes.ts).
   */
  accountRequests?: number;
  /**
   * A replay of a request of the webhook's inbound log (`shared/domain/inbound-replay.ts`): the run records
   * `replayOf`, its `Idempotency-Key` is the replay's own (a scope apart from the senders'), and `alongside`
   * (its audit entry) is written in the run's transaction.
   */
  replay?: { requestId: string; alongside: (execution: Execution) => Record<string, unknown>[] };
};

/**
 * The workflow as it is now, when its runs start in their trigger (`runsInline`: they finish there, or
 * are handed to the worker at their first step that needs it): read through the 5 s cache the worker
 * uses, so a busy webhook reads it once in 5 s per instance. Otherwise the run is queued by reference
 * and takes its workflow when the worker picks it up.
 */
async function inlineWorkflow(w: Webhook) {
  if (config().INLINE_RUNS === 'off') return undefined;
  const workflow = await currentWorkflow(w.accountId, w.workflowId);
  return workflow && runsInline(workflow.definition) ? workflow : undefined;
}

/**
 * One new execution for an accepted trigger (or the earlier one, replayed, for a known key). Round
 * trips (docs/performance.md): a run that finishes in its trigger is written once, ended; any other
 * run's execution (with its first event) and its queue message go out together.
 */
export async function startTriggeredRun(t: Trigger, now = Date.now()) {
  const { webhook: w, payload } = t;
  const dedupe = t.replay
    ? t.idempotencyKey && {
        key: t.idempotencyKey,
        scope: idempotencyScope.webhookReplay(w.webhookId),
        label: 'Idempotency-Key',
        request: { replayOf: t.replay.requestId },
      }
    : t.idempotencyKey
      ? { key: t.idempotencyKey, scope: idempotencyScope.webhookKey(w.webhookId), label: 'Idempotency-Key', request: payload }
      : t.deliveryId && { key: t.deliveryId, scope: idempotencyScope.webhookDelivery(w.webhookId), label: 'delivery id', request: payload };
  const [stored, inline] = await Promise.all([storablePayload(w.accountId, w.webhookId, payload, now), inlineWorkflow(w)]);
  const triggerContext = triggerContextOf(w, t.headers ?? {}, payload);
  const { execution, replayed } = await startRun(
    {
      // By reference: the worker takes the workflow (definition, defaults) when it picks the run up.
      workflow: { accountId: w.accountId, workflowId: w.workflowId },
      trigger: 'webhook',
      webhookId: w.webhookId,
      variables: mapVariables(payload, w.variableMapping),
      idempotency: dedupe || undefined,
      extra: {
        ...stored,
        authMode: authMode(w),
        keyId: t.keyId,
        sourceIp: t.sourceIp,
        ...(triggerContext ? { triggerContext } : {}),
        ...(t.replay ? { replayOf: t.replay.requestId } : {}),
      },
      alongside: t.replay?.alongside,
      ended: inline && ((execution, started) => runInline(execution, started, inline)),
      lane: laneOf(w.accountId, t.accountRequests, now),
    },
    now,
  );
  if (!t.replay) emit('TriggerAccepted');
  if (!t.replay && authMode(w) === 'open') emit('OpenWebhookTriggered');
  // An accepted trigger's use of the key is counted when its run leaves PENDING; a replay starts no run.
  const keyId = t.keyId;
  if (replayed && keyId) countKeyUse(keyId, now);
  return {
    replayed,
    result: {
      executionId: execution.executionId,
      webhookId: w.webhookId,
      workflowId: w.workflowId,
      status: execution.status,
      startedAt: execution.startedAt,
    },
  };
}
