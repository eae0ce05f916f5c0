import type { Scope } from '../../db/entities/api-key.ts';
import { countKeyUse, keyIsLive } from '../../db/entities/api-key.ts';
import { failedAuthentication } from '../../domain/auth-failures.ts';
import { authenticateKey, invalidKey, isInvalidKey, keyOwner } from '../../domain/keys.ts';
import { caches } from '../../domain/records.ts';
import { takeAccountBudget } from '../../domain/rate-limit.ts';
import { forbidden, unauthorized } from '../../errors.ts';
import { logger } from '../../logger.ts';
import type { AppContext, Middleware } from '../context.ts';
import { presentedKey } from '../credentials.ts';

export type KeyAuthOptions = {
  scope: Scope;
  /** Accept the `api_key` query parameter (trigger and one-click link only). */
  allowQuery?: boolean;
  /** Status for a key without the scope: 401 on the spec's trigger/approval endpoints, 403 on v1. */
  missingScopeStatus?: 401 | 403;
};

/**
 * Open-platform routes: resolve the API key, check its scope, then meter the call: the account's rate
 * limit is written (which returns the plan) while the key item is read, in parallel, one round trip.
 * The read is strongly consistent and the key must be live in it (not revoked, owner not suspended),
 * and the rate-limit write is conditional on its owner's membership generation being the key's, so a
 * revocation, a disable or a removal made elsewhere takes effect at once even where the key record is
 * still cached. The key's usage is counted in the instance and written at most once a second per key
 * (`countKeyUse`): a busy key's item takes reads, not a write per request. The rate-limit headers go on
 * every later response of the request, error or not.
 */
export const apiKeyAuth = (opts: KeyAuthOptions): Middleware => ({
  problems: [
    { status: 401, code: 'UNAUTHORIZED' },
    { status: 401, code: 'INVALID_API_KEY' },
    (opts.missingScopeStatus ?? 403) === 401 ? { status: 401, code: 'MISSING_SCOPE' } : { status: 403, code: 'INSUFFICIENT_SCOPE' },
    { status: 429, code: 'RATE_LIMITED' },
  ],
  before: async ({ event, context }) => {
    const app = (context as AppContext).app;
    const authenticate = async () => {
      const token = presentedKey(event, opts.allowQuery ?? false);
      if (!token) throw unauthorized('UNAUTHORIZED', 'Send an API key as a Bearer credential.');
      return authenticateKey(token);
    };
    // A missing or invalid key counts against the source address's failure budget (429 once over it).
    const key = await authenticate().catch(async (e: unknown) => {
      throw await failedAuthentication(app.sourceIp, e);
    });
    if (!key.scopes.includes(opts.scope)) {
      const status = opts.missingScopeStatus ?? 403;
      const detail = `The API key lacks the ${opts.scope} scope.`;
      throw status === 401 ? unauthorized('MISSING_SCOPE', detail) : forbidden('INSUFFICIENT_SCOPE', detail);
    }
    const now = Date.now();
    const [budget, live] = await Promise.allSettled([takeAccountBudget(key.accountId, now, keyOwner(key)), keyIsLive(key.keyId)]);
    if (live.status === 'rejected') logger.warn('key not read again', { keyId: key.keyId, error: live.reason as Error });
    // The read refuses a key revoked since this instance cached it; the rate-limit write one whose
    // owner was disabled or removed since the key was made (its membership generation).
    if ((live.status === 'fulfilled' && !live.value) || (budget.status === 'rejected' && isInvalidKey(budget.reason))) {
      caches.keys.delete(key.keyId);
      throw await failedAuthentication(app.sourceIp, invalidKey());
    }
    // A live key that got as far as the rate limit was used, whatever comes after.
    countKeyUse(key.keyId, now);
    // A refusal of the budget carries its headers and the plan is not needed then.
    if (budget.status === 'rejected') throw budget.reason;
    app.principal = {
      kind: 'apiKey',
      accountId: key.accountId,
      userId: key.ownerId,
      keyId: key.keyId,
      scopes: key.scopes,
      plan: budget.value.plan,
      // The one-click link is the only route that takes the key in its query (the webhook trigger has its own checks).
      via: { ip: app.sourceIp, channel: opts.allowQuery ? 'link' : 'api' },
    };
    Object.assign(app.responseHeaders, budget.value.headers);
  },
});
