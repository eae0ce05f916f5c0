import { createHmac } from 'node:crypto';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { type SignatureScheme, signedBy, type Webhook } from '../db/entities/webhook.ts';
import { unauthorized } from '../errors.ts';
import { safeEqual } from '../tokens.ts';

/**
 * The senders an HMAC webhook can be pointed at straight away (docs/webhooks.md "Webhook senders"): how each
 * signs a request, which header or field names a delivery (for dedupe), and the handshakes that
 * answer without a run. Every scheme is HMAC-SHA256 over the body bytes exactly as received,
 * compared in constant time. Timestamped schemes refuse a timestamp more than 5 minutes from now,
 * in either direction, before they look at the signature (Slack's documented order, and
 * `standardwebhooks`').
 */

type Headers = Record<string, string | undefined>;

export const SIGNATURE_TOLERANCE_SECONDS = 5 * 60;

const invalid = (detail: string) => unauthorized('INVALID_SIGNATURE', detail);
const hmacHex = (secret: string, ...parts: (string | Buffer)[]) => {
  const h = createHmac('sha256', secret);
  for (const p of parts) h.update(p);
  return h.digest('hex');
};
/** Does any of the presented hex signatures match? Each comparison is constant-time. */
const anyMatches = (given: readonly string[], expected: string) =>
  given.reduce((ok, g) => safeEqual(g.trim().toLowerCase(), expected) || ok, false);

/** A Unix-seconds timestamp within the tolerance of `now`, else 401 (`SIGNATURE_EXPIRED` when it is only late or early). */
function timestamp(value: string | undefined, header: string, now: number): string {
  if (!value || !/^\d{1,12}$/.test(value.trim())) throw invalid(`Send ${header} with the Unix time of the signature.`);
  if (Math.abs(now / 1000 - Number(value)) > SIGNATURE_TOLERANCE_SECONDS)
    throw unauthorized('SIGNATURE_EXPIRED', `The signature's timestamp is more than ${SIGNATURE_TOLERANCE_SECONDS / 60} minutes from now.`);
  return value.trim();
}

const verifiers: Record<SignatureScheme, (secret: string, h: Headers, body: Buffer, now: number) => void> = {
  /** The spec's mode: `X-Webhook-Signature: sha256=<hex>` or `<hex>` of the raw body. No timestamp. */
  'legacy-hmac': (secret, h, body) => {
    const given = h['x-webhook-signature'];
    if (!given) throw invalid('Send X-Webhook-Signature: sha256=<hex HMAC of the raw body>.');
    if (!anyMatches([given.trim().replace(/^sha256=/i, '')], hmacHex(secret, body)))
      throw invalid('The signature does not match the body.');
  },
  /** GitHub: `X-Hub-Signature-256: sha256=<hex>` of the raw body. GitHub sends no timestamp. */
  github: (secret, h, body) => {
    const given = /^sha256=([0-9a-f]+)$/i.exec(h['x-hub-signature-256']?.trim() ?? '');
    if (!given?.[1]) throw invalid('Send X-Hub-Signature-256: sha256=<hex HMAC of the raw body>.');
    if (!anyMatches([given[1]], hmacHex(secret, body))) throw invalid('The signature does not match the body.');
  },
  /** Stripe: `Stripe-Signature: t=<unix>,v1=<hex>[,v1=<hex>...]` over `<t>.<body>`. */
  stripe: (secret, h, body, now) => {
    const pairs = (h['stripe-signature'] ?? '').split(',').map((p) => p.trim().split('='));
    const t = timestamp(pairs.find(([k]) => k === 't')?.[1], 'Stripe-Signature t=', now);
    const v1 = pairs.filter(([k, v]) => k === 'v1' && v).map(([, v]) => v as string);
    if (!v1.length) throw invalid('Send Stripe-Signature: t=<unix>,v1=<hex HMAC of "<t>.<body>">.');
    if (!anyMatches(v1, hmacHex(secret, `${t}.`, body))) throw invalid('The signature does not match the body.');
  },
  /** Slack: `X-Slack-Signature: v0=<hex>` over `v0:<X-Slack-Request-Timestamp>:<body>`. */
  slack: (secret, h, body, now) => {
    const ts = timestamp(h['x-slack-request-timestamp'], 'X-Slack-Request-Timestamp', now);
    const given = /^v0=([0-9a-f]+)$/i.exec(h['x-slack-signature']?.trim() ?? '');
    if (!given?.[1]) throw invalid('Send X-Slack-Signature: v0=<hex HMAC of "v0:<timestamp>:<body>">.');
    if (!anyMatches([given[1]], hmacHex(secret, `v0:${ts}:`, body))) throw invalid('The signature does not match the body.');
  },
  /** Standard Webhooks, verified by the maintained `standardwebhooks` package (a `whsec_` secret is base64 after the prefix). */
  'standard-webhooks': (secret, h, body, now) => {
    if (!h['webhook-id'] || !h['webhook-signature']) throw invalid('Send webhook-id, webhook-timestamp and webhook-signature.');
    timestamp(h['webhook-timestamp'], 'webhook-timestamp', now);
    try {
      new StandardWebhook(secret).verify(body, h as Record<string, string>, { jsonParse: false });
    } catch {
      throw invalid('No webhook-signature entry matches the body.');
    }
  },
};

/** 401 `INVALID_SIGNATURE` (missing or wrong) or `SIGNATURE_EXPIRED` unless the request is signed by `scheme` with `secret`. */
export function verifySignature(scheme: SignatureScheme, secret: string, headers: Headers, body: Buffer, now = Date.now()): void {
  verifiers[scheme](secret, headers, body, now);
}

/** A Standard Webhooks secret: `whsec_` and the base64 of 24 to 64 random bytes (the specification's range). */
export const isStandardWebhooksSecret = (s: string) =>
  /^whsec_[A-Za-z0-9+/]+={0,2}$/.test(s) &&
  Buffer.from(s.slice(6), 'base64').length >= 24 &&
  Buffer.from(s.slice(6), 'base64').length <= 64;

const usableId = (v: unknown) => (typeof v === 'string' && /^[\x21-\x7e]{1,255}$/.test(v) ? v : undefined);

/**
 * Whether the webhook's sender signs its deliveries with an id of its own (every scheme but the
 * legacy one): then that id is the only dedupe key, and an `Idempotency-Key` header, which nobody
 * signs, is ignored. Otherwise a captured delivery re-sent with made-up keys would start a run each.
 */
export const sendsDeliveryIds = (w: Webhook): boolean => {
  const scheme = signedBy(w);
  return scheme !== undefined && scheme !== 'legacy-hmac';
};

/**
 * The sender's own id of a delivery, which its retries repeat: a run is started once per id (24 h),
 * like an `Idempotency-Key`. None for the legacy scheme, nor where a sender sends none.
 */
export function deliveryId(w: Webhook, headers: Headers, payload: Record<string, unknown>): string | undefined {
  const scheme = signedBy(w);
  if (scheme === 'standard-webhooks') return usableId(headers['webhook-id']);
  if (scheme === 'github') return usableId(headers['x-github-delivery']);
  if (scheme === 'stripe') return usableId(payload.id);
  if (scheme === 'slack') return usableId(payload.event_id);
  return undefined;
}

/** A sender's setup handshake, answered 200 without a run: Slack's `url_verification`, GitHub's `ping`. */
export function handshake(w: Webhook, headers: Headers, payload: Record<string, unknown>): Record<string, unknown> | undefined {
  const scheme = signedBy(w);
  if (scheme === 'slack' && payload.type === 'url_verification' && typeof payload.challenge === 'string')
    return { challenge: payload.challenge };
  if (scheme === 'github' && headers['x-github-event'] === 'ping') return { ok: true, event: 'ping' };
  return undefined;
}
