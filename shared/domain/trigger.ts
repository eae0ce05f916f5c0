import { createHmac, randomUUID } from 'node:crypto';
import { storage } from '../clients.ts';
import { config } from '../config.ts';
import { type ApiKey, recordKeyUsage } from '../db/entities/api-key.ts';
import { authMode, recordRejected, type Webhook } from '../db/entities/webhook.ts';
import { logger } from '../logger.ts';
import { startRun } from '../engine/runs.ts';
import { AppError, badRequest, conflict, forbidden, notFound, unauthorized, unsupportedMediaType } from '../errors.ts';
import { inRanges, parseRange } from '../http/client-ip.ts';
import type { HttpEvent } from '../http/context.ts';
import { idempotencyKey } from '../http/idempotency.ts';
import { presentedKey } from '../http/credentials.ts';
import { isJsonContentType, parseJsonBody } from '../http/middleware/parse-request.ts';
import { hashToken, parseToken, safeEqual } from '../tokens.ts';
import { keyStatus } from './keys.ts';
import { takeAccountBudget } from './rate-limit.ts';
import { keyRead, readThrough, webhookRead } from './records.ts';
import { emit } from '../metrics.ts';

export type TriggerRequest = { event: HttpEvent; webhookId: string; sourceIp: string };
/** Filled as the checks pass, so the caller can count a refusal against the webhook and add headers. */
export type TriggerState = { webhook?: Webhook; rateLimitHeaders?: Record<string, string>; metered?: ApiKey };

const rawBody = (e: HttpEvent) => (e.body ? Buffer.from(e.body, e.isBase64Encoded ? 'base64' : 'utf8') : Buffer.alloc(0));

/** Key-bound mode: exactly the bound key, of the webhook's account, valid, with WEBHOOK_TRIGGER. */
function checkKey(w: Webhook, token: string | undefined, key: ApiKey | undefined, now: number) {
  if (!token) throw unauthorized('UNAUTHORIZED', 'This webhook needs its bound API key (Bearer, X-API-Key or api_key).');
  const parsed = parseToken(token, 'dyk');
  if (!parsed || !key || !safeEqual(hashToken(token), key.tokenHash) || keyStatus(key, now) !== 'active') {
    throw unauthorized('INVALID_API_KEY', 'The API key is invalid, expired or revoked.');
  }
  if (key.keyId !== w.apiKeyId || key.accountId !== w.accountId)
    throw unauthorized('KEY_NOT_BOUND', 'This API key is not the one bound to the webhook.');
  if (!key.scopes.includes('WEBHOOK_TRIGGER')) throw unauthorized('MISSING_SCOPE', 'The API key lacks the WEBHOOK_TRIGGER scope.');
  return key;
}

/** HMAC mode: `X-Webhook-Signature: sha256=<hex>` or `<hex>` of HMAC-SHA256(secret, raw body bytes). */
function checkSignature(w: Webhook, event: HttpEvent) {
  const header = event.headers['x-webhook-signature'];
  if (!header) throw unauthorized('INVALID_SIGNATURE', 'Send X-Webhook-Signature: sha256=<hex HMAC of the raw body>.');
  const given = header
    .trim()
    .replace(/^sha256=/i, '')
    .toLowerCase();
  const expected = createHmac('sha256', w.secretKey as string)
    .update(rawBody(event))
    .digest('hex');
  if (!safeEqual(given, expected)) throw unauthorized('INVALID_SIGNATURE', 'The signature does not match the body.');
}

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

/**
 * A webhook trigger, checked in API.md's order: 404, 401, 403, 409, 429, 415, 400, then one new
 * execution. Round trips (README "Performance"): the webhook and the presented key are read together
 * (from the per-instance caches of `records.ts` when fresh: a warm trigger reads nothing); the
 * rate-limit count returns the plan; the execution (with its first event) and its queue message go
 * out together. The trigger reads no workflow: the run takes it when the worker picks it up.
 * Counting is off the hot path: an accepted trigger is counted in the webhook's stats and the key's
 * usage when its run leaves PENDING (`countAcceptedTrigger`); a refusal is counted here, after it.
 */
export async function triggerWebhook(req: TriggerRequest, state: TriggerState, now = Date.now()) {
  try {
    const accepted = await checkAndStart(req, state, now);
    emit('TriggerAccepted');
    // A replay starts no run, so nothing else counts its use of the key.
    const key = state.metered;
    if (accepted.replayed && key) {
      await recordKeyUsage(key.keyId, now).catch((error: unknown) =>
        logger.warn('key usage not recorded', { keyId: key.keyId, error: error as Error }),
      );
    }
    return accepted;
  } catch (e) {
    if (e instanceof AppError) emit('TriggerRejected', 1, { code: e.code });
    // A refusal of an existing webhook counts in its stats (by status); a 404 has no webhook to count.
    // A key that got as far as the rate limit was used, whatever came after.
    if (state.webhook && e instanceof AppError && e.statusCode < 500) {
      await Promise.all([
        recordRejected(state.webhook.webhookId, e.statusCode, now),
        state.metered && recordKeyUsage(state.metered.keyId, now),
      ]).catch((err: unknown) =>
        logger.warn('webhook rejection not counted', { webhookId: state.webhook?.webhookId, error: err as Error }),
      );
    }
    throw e;
  }
}

async function checkAndStart(req: TriggerRequest, state: TriggerState, now: number) {
  const { event, webhookId } = req;
  const token = presentedKey(event, true);
  const keyId = token ? parseToken(token, 'dyk')?.id : undefined;
  const [w, storedKey] = await readThrough([webhookRead(webhookId), keyId ? keyRead(keyId) : undefined], now);
  if (!w) throw notFound('WEBHOOK_NOT_FOUND', `Webhook ${webhookId} does not exist.`);
  state.webhook = w;

  const mode = authMode(w);
  const key = mode === 'api_key' ? checkKey(w, token, storedKey, now) : undefined;
  if (mode === 'hmac') checkSignature(w, event);

  if (
    w.allowedSourceIps.length &&
    !inRanges(
      req.sourceIp,
      w.allowedSourceIps.map(parseRange).filter((r) => r !== undefined),
    )
  ) {
    throw forbidden('IP_NOT_ALLOWED', `Requests from ${req.sourceIp} may not trigger this webhook.`);
  }
  if (!w.enabled) throw conflict('WEBHOOK_DISABLED', `Webhook ${webhookId} is disabled.`);
  state.metered = key;

  try {
    state.rateLimitHeaders = (await takeAccountBudget(w.accountId, now)).headers;
  } catch (e) {
    if (e instanceof AppError) state.rateLimitHeaders = e.extra.headers;
    throw e;
  }

  if (!isJsonContentType(event.headers['content-type'])) throw unsupportedMediaType();
  const payload = parseJsonBody(event.body, event.isBase64Encoded);
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload))
    throw badRequest('BODY_NOT_OBJECT', 'The body must be a JSON object.');
  const idemKey = idempotencyKey(event);

  const stored = await storablePayload(w.accountId, webhookId, payload, now);
  const { execution, replayed } = await startRun(
    {
      // By reference: the worker takes the workflow (definition, defaults) when it picks the run up.
      workflow: { accountId: w.accountId, workflowId: w.workflowId },
      trigger: 'webhook',
      webhookId,
      variables: mapVariables(payload as Record<string, unknown>, w.variableMapping),
      idempotency: idemKey ? { scope: `WH#${webhookId}`, key: idemKey, request: payload } : undefined,
      extra: { ...stored, authMode: mode, keyId: key?.keyId, sourceIp: req.sourceIp },
    },
    now,
  );
  return {
    replayed,
    result: {
      executionId: execution.executionId,
      webhookId,
      workflowId: w.workflowId,
      status: execution.status,
      startedAt: execution.startedAt,
    },
  };
}
