import { failedAuthentication } from '../../domain/auth-failures.ts';
import { authenticateCallback, isCallbackAuthFailure } from '../../domain/callbacks.ts';
import { takeAccountBudget } from '../../domain/rate-limit.ts';
import type { AppContext, Middleware } from '../context.ts';
import { presentedBearer } from '../credentials.ts';

/**
 * The callback routes: the credential is the callback's own token (`Authorization: Bearer`), for the
 * callback in the path only. A missing or wrong token counts against the source address's failure
 * budget (as every credential does); a callback of another account (or none) is 404. Past that, the
 * call takes one request from the account's per-minute budget, as the v1 routes do.
 */
export const callbackAuth = (): Middleware => ({
  problems: [
    { status: 401, code: 'UNAUTHORIZED' },
    { status: 401, code: 'INVALID_CALLBACK_TOKEN' },
    { status: 404, code: 'CALLBACK_NOT_FOUND' },
    { status: 429, code: 'RATE_LIMITED' },
  ],
  before: async ({ event, context }) => {
    const app = (context as AppContext).app;
    const callbackId = event.pathParameters?.callbackId ?? '';
    const callback = await authenticateCallback(presentedBearer(event), callbackId).catch(async (e: unknown) => {
      throw isCallbackAuthFailure(e) ? await failedAuthentication(app.sourceIp, e) : e;
    });
    const budget = await takeAccountBudget(callback.accountId, Date.now());
    app.principal = { kind: 'callback', accountId: callback.accountId, callback, plan: budget.plan };
    Object.assign(app.responseHeaders, budget.headers);
  },
});
