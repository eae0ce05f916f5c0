import { Webhook } from 'standardwebhooks';
import { config } from '../config.ts';
import { getExecution } from '../db/entities/execution.ts';
import { readSecrets } from '../db/secret-values.ts';
import { logger } from '../logger.ts';
import { performHttpRequest } from '../egress/http.ts';
import type { SendResult } from '../channels/types.ts';
import type { EventNotice } from '../engine/notify.ts';
import { safeError, safeTarget } from '../domain/delivery-policy.ts';
import { parseRetryAfter } from '../retry-after.ts';
import { referencedSecret } from '../engine/secret-reference.ts';
import { StepError } from '../step-error.ts';
import { runDefinition } from '../engine/versions.ts';

export const DELIVERY_TIMEOUT_MS = 10_000;

/**
 * Send one event to one notification target as a Standard Webhooks POST (`webhook-id` = event id, so
 * receivers can deduplicate retries). The target URL and secret come from the run's definition
 * snapshot, never from the message. Answers what happened, for the delivery log (the notifications
 * worker decides the retry): never throws for the receiver's faults. Targets obey the same address
 * rules as http_request steps; a target those rules refuse, a run or target that is gone, a missing
 * signing secret are `final` (no retry can fix them).
 */
export async function sendEvent(m: EventNotice, now = new Date()): Promise<SendResult> {
  const e = m.workflow ? { accountId: m.accountId, ...m.workflow } : await getExecution(m.accountId, m.executionId);
  const target = e && (await runDefinition(e))?.notifications?.[m.target];
  if (!e || !target) {
    logger.warn('notification dropped: run or target gone', { executionId: m.executionId, target: m.target });
    return { ok: false, final: true, error: 'the run or its notification target no longer exists' };
  }
  const shown = safeTarget(target.url);
  const payload = JSON.stringify({
    type: m.event.type,
    timestamp: new Date(m.event.at).toISOString(),
    data: { ...m.event, workflowId: e.workflowId },
  });
  const secret = await signingSecret(m.accountId, target.secret as string);
  if (secret === undefined) return { ok: false, final: true, target: shown, error: 'the signing secret is missing or not a whsec_ secret' };
  const signature = secret.sign(m.event.eventId, now, payload);
  let res: Awaited<ReturnType<typeof performHttpRequest>>;
  try {
    res = await performHttpRequest(
      {
        method: 'POST',
        url: target.url,
        headers: {
          'content-type': 'application/json',
          'webhook-id': m.event.eventId,
          'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
          'webhook-signature': signature,
        },
        body: payload,
        timeoutMs: DELIVERY_TIMEOUT_MS,
      },
      // No redirects: a 301/302/303 would turn the POST into a GET without the event, and count it delivered.
      { allowlist: config().HTTP_STEP_ALLOWLIST, maxResponseBytes: 64 * 1024, maxRedirects: 0 },
    );
  } catch (err) {
    const code = err instanceof StepError ? err.code : undefined;
    return {
      ok: false,
      target: shown,
      error: safeError(`${code ? `${code}: ` : ''}${(err as Error).message}`),
      final: code !== undefined && UNFIXABLE.has(code),
    };
  }
  if (res.status >= 200 && res.status < 300) return { ok: true, status: res.status, target: shown };
  return {
    ok: false,
    status: res.status,
    target: shown,
    error: `${new URL(target.url).host} answered ${res.status}`,
    ...(res.status === 429 || res.status === 503 ? { retryAfterSeconds: parseRetryAfter(res.headers['retry-after']) } : {}),
  };
}

/** Refusals of the address rules: the same target is refused again on every retry. */
const UNFIXABLE = new Set(['INVALID_URL', 'TARGET_FORBIDDEN', 'INSECURE_URL']);

/**
 * The target's signer: its literal `whsec_` secret, or the account secret it names
 * (`{% $secrets.NAME %}`, read through the worker's cache). A missing or malformed account secret
 * drops the delivery with a warning that names it (never its value).
 */
async function signingSecret(accountId: string, secret: string): Promise<Webhook | undefined> {
  const name = referencedSecret(secret);
  if (name === undefined) return new Webhook(secret);
  const { values } = await readSecrets(accountId, [name], Date.now(), false);
  const value = values[name];
  if (value === undefined) return void logger.warn('notification dropped: no such account secret', { accountId, secret: name });
  try {
    return new Webhook(value);
  } catch {
    return void logger.warn('notification dropped: the account secret is not a whsec_ secret', { accountId, secret: name });
  }
}
