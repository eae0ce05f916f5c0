import { Webhook } from 'standardwebhooks';
import { config } from '../config.ts';
import { getExecution } from '../db/entities/execution.ts';
import { readSecrets } from '../domain/account-secrets.ts';
import { logger } from '../logger.ts';
import { performHttpRequest } from './http-request.ts';
import type { NotifyMessage } from './notify.ts';
import { referencedSecret } from './secret-refs.ts';
import { StepError } from './step-error.ts';
import { runDefinition } from './versions.ts';

export const DELIVERY_TIMEOUT_MS = 10_000;

/**
 * Deliver one event to one notification target as a Standard Webhooks POST (`webhook-id` = event id,
 * so receivers can deduplicate retries). The target URL and secret come from the run's definition
 * snapshot, never from the message. Throws on failure so the queue retries it; the caller decides
 * the backoff. Targets obey the same address rules as http_request steps.
 */
export async function deliverNotification(m: NotifyMessage, now = new Date()): Promise<'delivered' | 'dropped'> {
  const e = m.workflow ? { accountId: m.accountId, ...m.workflow } : await getExecution(m.accountId, m.executionId);
  const target = e && (await runDefinition(e))?.notifications?.[m.target];
  if (!e || !target) {
    logger.warn('notification dropped: run or target gone', { executionId: m.executionId, target: m.target });
    return 'dropped';
  }
  const payload = JSON.stringify({
    type: m.event.type,
    timestamp: new Date(m.event.at).toISOString(),
    data: { ...m.event, workflowId: e.workflowId },
  });
  const secret = await signingSecret(m.accountId, target.secret as string);
  if (secret === undefined) return 'dropped';
  const signature = secret.sign(m.event.eventId, now, payload);
  const res = await performHttpRequest(
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
  if (res.status < 200 || res.status >= 300) throw new StepError('DELIVERY_FAILED', `${new URL(target.url).host} answered ${res.status}`);
  return 'delivered';
}

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

/** Seconds before the next try: 10 s, 20 s, 40 s, ... capped at 15 minutes. */
export const retryDelaySeconds = (receiveCount: number) => Math.min(900, 10 * 2 ** Math.max(0, receiveCount - 1));
