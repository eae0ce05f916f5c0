import { type Callback, getCallback } from '../../db/entities/callback.ts';
import { failedAuthentication } from '../../domain/auth-failures.ts';
import { takeAccountBudget } from '../../domain/rate-limit.ts';
import { AppError, notFound, unauthorized } from '../../errors.ts';
import { Id } from '../../schemas/common.ts';
import { hashToken, parseToken, safeEqual } from '../../tokens.ts';
import type { AppContext, Middleware } from '../context.ts';
import { CALLBACK_AUTH_PROBLEMS } from '../handler.ts';
import { presentedBearer } from '../credentials.ts';

const invalidToken = () => unauthorized('INVALID_CALLBACK_TOKEN', 'The token is not the one for this callback.');

/**
 * The callback a request names, if `token` is its token. The token names its account (`dyc_<account
 * id>_<secret>`: a callback of another account, or none, is 404); it is compared with the stored hash
 * in constant time (401). Reads nothing of the engine (this module is in every route's bundle).
 */
export async function authenticateCallback(token: string | undefined, callbackId: string): Promise<Callback> {
  if (!token) throw unauthorized('UNAUTHORIZED', "Send the callback's token as a Bearer credential.");
  const parsed = parseToken(token, 'dyc');
  if (!parsed) throw invalidToken();
  const c = Id.safeParse(callbackId).success ? await getCallback(`acc_${parsed.id}`, callbackId) : undefined;
  if (!c) throw notFound('CALLBACK_NOT_FOUND', `Callback ${callbackId.slice(0, 64)} does not exist.`);
  if (!safeEqual(hashToken(token), c.tokenHash)) throw invalidToken();
  return c;
}

const isAuthFailure = (e: unknown) => e instanceof AppError && e.kind === 'unauthorized';

/**
 * The callback routes: the credential is the callback's own token (`Authorization: Bearer`), for the
 * callback in the path only. A missing or wrong token counts against the source address's failure
 * budget (as every credential does); a callback of another account (or none) is 404. Past that, the
 * call takes one request from the account's per-minute budget, as the v1 routes do.
 */
export const callbackAuth = (): Middleware => ({
  problems: CALLBACK_AUTH_PROBLEMS,
  before: async ({ event, context }) => {
    const app = (context as AppContext).app;
    const callbackId = event.pathParameters?.callbackId ?? '';
    const callback = await authenticateCallback(presentedBearer(event), callbackId).catch(async (e: unknown) => {
      throw isAuthFailure(e) ? await failedAuthentication(app.sourceIp, e) : e;
    });
    const budget = await takeAccountBudget(callback.accountId, Date.now());
    app.principal = { kind: 'callback', accountId: callback.accountId, callback, plan: budget.plan };
    Object.assign(app.responseHeaders, budget.headers);
  },
});
