import { failedAuthentication } from '../../domain/auth-failures.ts';
import { authenticateSession } from '../../domain/sessions.ts';
import { forbidden, unauthorized } from '../../errors.ts';
import type { AppContext, Middleware } from '../context.ts';
import { presentedBearer } from '../credentials.ts';

/**
 * Console routes: a `dys_` session as Bearer; `admin` routes answer 403 to members. A missing or
 * invalid session counts against the source address's failure budget (429 once over it).
 */
export const sessionAuth = (opts: { admin?: boolean }): Middleware => ({
  before: async ({ event, context }) => {
    const app = (context as AppContext).app;
    const authenticate = async () => {
      const token = presentedBearer(event);
      if (!token) throw unauthorized('UNAUTHORIZED', 'Log in and send the session token as a Bearer credential.');
      return authenticateSession(token);
    };
    const principal = await authenticate().catch(async (e: unknown) => {
      throw await failedAuthentication(app.sourceIp, e);
    });
    if (opts.admin && principal.role !== 'admin') throw forbidden('ADMIN_ONLY', 'Only account admins may do this.');
    app.principal = { ...principal, via: { ip: app.sourceIp, channel: 'api' } };
  },
  problems: [
    { status: 401, code: 'UNAUTHORIZED' },
    { status: 401, code: 'INVALID_SESSION' },
    { status: 429, code: 'RATE_LIMITED' },
    ...(opts.admin ? [{ status: 403, code: 'ADMIN_ONLY' }] : []),
  ],
});
