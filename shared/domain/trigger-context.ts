import type { TriggerContext } from '../db/entities/execution-state.ts';
import { signedBy, type Webhook } from '../db/entities/webhook.ts';

/**
 * `$trigger` (docs/workflows.md "Control flow"): a webhook run's request headers, credentials and
 * signatures removed, and the sender's name for the event. Kept on the run only when its workflow
 * reads `$trigger`: a queued run's trigger has no definition at hand, so the webhook record carries that fact
 * (`triggerContext`), set when the webhook is saved and whenever its workflow's definition starts or
 * stops reading `$trigger` (`./trigger-context-sync.ts`). Other runs' records and writes do not grow.
 */

/** Credentials and signatures: never kept. */
const WITHHELD = new Set(['authorization', 'proxy-authorization', 'cookie', 'set-cookie', 'x-api-key']);
/** A name that contains one of these is a credential's or a signature's, whatever the sender calls it. */
const CREDENTIAL_WORDS = /auth|token|secret|passw|signature|hmac|cookie|session|credential|api[-_]?key|jwt|bearer|private/;
/** A name with one of these as a whole word (`x-functions-key`, `paypal-transmission-sig`), or a word ending in `key`. */
const CREDENTIAL_PARTS = new Set(['key', 'sig', 'pass', 'pwd', 'pin', 'otp', 'csrf', 'xsrf', 'sid']);
/** A header name of a credential or a signature (lower case): never kept on a run, masked in the inbound log. */
export const withheld = (name: string) =>
  WITHHELD.has(name) ||
  CREDENTIAL_WORDS.test(name) ||
  name.split(/[-_.]/).some((part) => CREDENTIAL_PARTS.has(part) || part.endsWith('key'));

const text = (v: unknown) => (typeof v === 'string' && v.length > 0 && v.length <= 255 ? v : undefined);

/** The event name a sender gives its delivery: GitHub's `X-GitHub-Event`, Stripe's `type`, Slack's `event.type`. */
function eventName(w: Webhook, headers: Record<string, string>, payload: Record<string, unknown>): string | undefined {
  switch (signedBy(w)) {
    case 'github':
      return text(headers['x-github-event']);
    case 'stripe':
      return text(payload.type);
    case 'slack': {
      const event = payload.event;
      return text(event && typeof event === 'object' ? (event as Record<string, unknown>).type : undefined);
    }
    default:
      return undefined;
  }
}

/** The context a trigger keeps on its run, or none when the webhook's workflow does not read `$trigger`. */
export function triggerContextOf(
  w: Webhook,
  headers: Record<string, string | undefined>,
  payload: Record<string, unknown>,
): TriggerContext | undefined {
  if (!w.triggerContext) return undefined;
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    const n = name.toLowerCase();
    if (value !== undefined && !withheld(n)) kept[n] = value;
  }
  const event = eventName(w, kept, payload);
  return { headers: kept, ...(event ? { event } : {}) };
}
