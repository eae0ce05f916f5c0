import type { ApiKey } from '../../db/entities/api-key.ts';
import { countKeyUse } from '../../db/entities/api-key.ts';
import { authMode, countRejected, signedBy, type Webhook } from '../../db/entities/webhook.ts';
import { failedAuthentication } from '../../domain/auth-failures.ts';
import { isInvalidKey, keyOwner, presentedKeyRead, verifiedKey } from '../../domain/keys.ts';
import { takeAccountBudget } from '../../domain/rate-limit.ts';
import { readThrough, webhookRead } from '../../domain/records.ts';
import { AppError, conflict, forbidden, notFound, unauthorized } from '../../errors.ts';
import { httpStatus } from '../../http-status.ts';
import { inRanges, parseRange } from '../../ip-ranges.ts';
import { emit } from '../../metrics.ts';
import { Id } from '../../schemas/common.ts';
import type { AppContext, HttpEvent, Middleware } from '../context.ts';
import { presentedKey } from '../credentials.ts';
import { verifySignature } from '../webhook-senders.ts';
import { recordRefusal } from '../../domain/inbound-record.ts';

const rawBody = (e: HttpEvent) => (e.body ? Buffer.from(e.body, e.isBase64Encoded ? 'base64' : 'utf8') : Buffer.alloc(0));

/** Key-bound mode: exactly the bound key, of the webhook's account, valid, with WEBHOOK_TRIGGER. */
function boundKey(w: Webhook, token: string | undefined, stored: ApiKey | undefined, now: number): ApiKey {
  if (!token) throw unauthorized('UNAUTHORIZED', 'This webhook needs its bound API key (Bearer, X-API-Key or api_key).');
  const key = verifiedKey(token, stored, now);
  if (key.keyId !== w.apiKeyId || key.accountId !== w.accountId)
    throw unauthorized('KEY_NOT_BOUND', 'This API key is not the one bound to the webhook.');
  if (!key.scopes.includes('WEBHOOK_TRIGGER')) throw unauthorized('MISSING_SCOPE', 'The API key lacks the WEBHOOK_TRIGGER scope.');
  return key;
}

/**
 * The webhook trigger's credentials and gates, in the order of docs/webhooks.md "The trigger": 404 (no such webhook: a malformed
 * id is one), 401 (the webhook's mode: bound key, signature by its scheme, or open; counted against
 * the address's failure budget, 429 past it), 403 (source allowlist), 409 (disabled), 429 (the account's budget, whose headers every later answer carries).
 * 415 and 400 follow in `parseRequest`. The webhook and a presented key are read together, from the
 * per-instance caches of `records.ts` when fresh: a warm trigger reads nothing here.
 *
 * A refusal of an existing webhook counts in its stats by status, whichever later layer refused; a
 * key that got as far as the rate limit was used, whatever came after. Accepted triggers are counted
 * when their run leaves PENDING, off the hot path.
 */
export const webhookAuth = (): Middleware => ({
  problems: [
    ...['UNAUTHORIZED', 'INVALID_API_KEY', 'KEY_NOT_BOUND', 'MISSING_SCOPE', 'INVALID_SIGNATURE', 'SIGNATURE_EXPIRED'].map((code) => ({
      status: 401,
      code,
    })),
    { status: 403, code: 'IP_NOT_ALLOWED' },
    { status: 404, code: 'WEBHOOK_NOT_FOUND' },
    { status: 409, code: 'WEBHOOK_DISABLED' },
    { status: 429, code: 'RATE_LIMITED' },
  ],
  before: async ({ event, context }) => {
    const app = (context as AppContext).app;
    const now = Date.now();
    const webhookId = event.pathParameters?.webhookId ?? '';
    const token = presentedKey(event, true);
    // The webhook and the key presented (if any) in one read, whatever the mode: 404 comes first.
    const keyRead = token ? presentedKeyRead(token) : undefined;
    const [w, storedKey] = Id.safeParse(webhookId).success ? await readThrough([webhookRead(webhookId), keyRead], now) : [];
    if (!w) throw notFound('WEBHOOK_NOT_FOUND', `Webhook ${webhookId.slice(0, 64)} does not exist.`);
    app.trigger = { webhook: w };

    let bound: ApiKey | undefined;
    try {
      const scheme = signedBy(w);
      if (scheme) verifySignature(scheme, w.secretKey as string, event.headers, rawBody(event), now);
      bound = authMode(w) === 'api_key' ? boundKey(w, token, storedKey, now) : undefined;
    } catch (e) {
      // A missing or wrong credential counts against the source address's failure budget (429 once over it).
      throw await failedAuthentication(app.sourceIp, e, now);
    }
    app.trigger.authenticated = true;
    if (
      w.allowedSourceIps.length &&
      !inRanges(
        app.sourceIp,
        w.allowedSourceIps.map(parseRange).filter((r) => r !== undefined),
      )
    )
      throw forbidden('IP_NOT_ALLOWED', `Requests from ${app.sourceIp} may not trigger this webhook.`);
    if (!w.enabled) throw conflict('WEBHOOK_DISABLED', `Webhook ${webhookId} is disabled.`);

    app.trigger.keyId = bound?.keyId;
    try {
      // A bound key's owner disabled or removed since the key was made: refused by this same write.
      const budget = await takeAccountBudget(w.accountId, now, bound && keyOwner(bound));
      Object.assign(app.responseHeaders, budget.headers);
      app.trigger.accountRequests = budget.used;
    } catch (e) {
      if (isInvalidKey(e)) {
        app.trigger.keyId = undefined;
        app.trigger.authenticated = false;
        throw await failedAuthentication(app.sourceIp, e, now);
      }
      if (e instanceof AppError) Object.assign(app.responseHeaders, e.extra.headers);
      throw e;
    }
    app.principal = { kind: 'webhook', accountId: w.accountId, webhook: w, keyId: bound?.keyId };
  },
  onError: async ({ error, context, event }) => {
    if (!(error instanceof AppError)) return;
    emit('TriggerRejected', 1, { code: error.code });
    const app = (context as AppContext).app;
    if (error.kind === 'internal') return;
    // A body over the limit is refused before the webhook is read: read it (cached) to log the refusal.
    const webhookId = event.pathParameters?.webhookId ?? '';
    const trigger =
      app.trigger ??
      (error.kind === 'too_large' && Id.safeParse(webhookId).success
        ? await readThrough([webhookRead(webhookId)], Date.now()).then(
            ([w]) => w && { webhook: w },
            () => undefined,
          )
        : undefined);
    if (!trigger) return;
    // Summed in this instance, written at the end of an invocation a second after the last write.
    const now = Date.now();
    countRejected(trigger.webhook.webhookId, httpStatus(error), now);
    if (app.trigger?.keyId) countKeyUse(app.trigger.keyId, now);
    // Its inbound log (docs/webhooks.md "Why was my request refused?"): kept in the instance, written at most once a second.
    await recordRefusal({
      webhookId: trigger.webhook.webhookId,
      accountId: trigger.webhook.accountId,
      at: now,
      ip: app.sourceIp,
      method: event.requestContext.http.method,
      status: httpStatus(error),
      code: error.code,
      headers: event.headers,
      body: rawBody(event),
      authenticated: app.trigger?.authenticated === true,
    });
  },
});
