// Replay: its own module, so that the trigger's bundle holds no audit code.
import { audited } from '../db/audited.ts';
import { badRequest, conflict, forbidden } from '../errors.ts';
import { inRanges, parseRange } from '../ip-ranges.ts';
import { findInbound, refusalView, runPayload } from './inbound-log.ts';
import type { Principal } from './principal.ts';
import { takeAccountBudget } from './rate-limit.ts';
import { startTriggeredRun } from './trigger.ts';
import { visibleWebhook } from './webhooks.ts';

type SessionPrincipal = Extract<Principal, { kind: 'session' }>;

const notReplayable = (why: string) => conflict('REQUEST_NOT_REPLAYABLE', why);

/** The body a replay starts from: a JSON object (an empty body is `{}`). */
function payloadOf(text: string): Record<string, unknown> {
  if (text.trim() === '') return {};
  try {
    const v: unknown = JSON.parse(text);
    if (typeof v === 'object' && v !== null && !Array.isArray(v)) return v as Record<string, unknown>;
  } catch {
    // refused below
  }
  throw notReplayable('Its body is not a JSON object: no trigger would start a run of it.');
}

/**
 * Replay a request of the webhook's inbound log (docs/webhooks.md "Replaying a request"): a new run of the
 * webhook's workflow as it is now, from the recorded body and the current mapping, as the webhook's own
 * trigger would start it, with `replayOf`; once per `Idempotency-Key` (24 h). The checks of the current
 * configuration apply but the sender's credential (key, signature, timestamp), which a replay cannot
 * present: 409 `WEBHOOK_DISABLED`, 403 `IP_NOT_ALLOWED` (the recorded address), 429 (the account's rate
 * limit). Replayable: an accepted request, or a refusal after the credential check (address, disabled,
 * rate limit) whose whole body was kept; never a refused credential. On the audit log, in the run's transaction.
 */
export async function replayRequest(
  p: SessionPrincipal,
  webhookId: string,
  requestId: string,
  idempotencyKey: string | undefined,
  now = Date.now(),
) {
  const w = await visibleWebhook(p, webhookId);
  if (!idempotencyKey) throw badRequest('IDEMPOTENCY_KEY_REQUIRED', 'A replay needs an Idempotency-Key header: one run per key.');
  const found = await findInbound(w, requestId, now);
  let text: string;
  let ip: string | undefined;
  let headers: Record<string, string> | undefined;
  if (found.kind === 'refused') {
    const view = refusalView(found.refusal);
    if (!view.replayable)
      throw notReplayable(
        found.refusal.bodyTruncated
          ? 'Only the start of its body was kept.'
          : `It was refused with ${found.refusal.code}: only accepted requests, and refusals after the credential check (${'IP_NOT_ALLOWED, WEBHOOK_DISABLED, RATE_LIMITED'}), may be replayed.`,
      );
    text = found.refusal.body;
    ip = found.refusal.ip;
    headers = found.refusal.headers;
  } else {
    text = await runPayload(found.run);
    ip = found.run.sourceIp;
    headers = found.run.triggerContext?.headers;
  }
  const payload = payloadOf(text);
  if (!w.enabled) throw conflict('WEBHOOK_DISABLED', `Webhook ${w.webhookId} is disabled.`);
  const ranges = w.allowedSourceIps.map(parseRange).filter((r) => r !== undefined);
  if (w.allowedSourceIps.length && !(ip && inRanges(ip, ranges)))
    throw forbidden('IP_NOT_ALLOWED', `Requests from ${ip ?? 'an unknown address'} may not trigger this webhook.`);
  const { used } = await takeAccountBudget(w.accountId, now);
  const { result, replayed } = await startTriggeredRun(
    {
      webhook: w,
      accountRequests: used,
      sourceIp: ip ?? '',
      payload,
      headers,
      idempotencyKey,
      replay: {
        requestId,
        alongside: (e) => [
          audited(
            p,
            'webhook.request_replayed',
            { type: 'webhook', id: w.webhookId, name: w.name },
            { requestId, executionId: e.executionId },
            now,
          ),
        ],
      },
    },
    now,
  );
  return { replayed, result: { ...result, replayOf: requestId } };
}
