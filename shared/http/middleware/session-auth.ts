import { authenticateSession } from '../../domain/sessions.ts';
import { forbidden, unauthorized } from '../../errors.ts';
import type { AppContext, Middleware } from '../context.ts';
import { presentedBearer } from '../credentials.ts';

/** Console routes: a `dys_` session as Bearer; `admin` routes answer 403 to members. */
export const sessionAuth = (opts: { admin?: boolean }): Middleware => ({
  before: async ({ event, context }) => {
    const token = presentedBearer(event);
    if (!token) throw unauthorized('UNAUTHORIZED', 'Log in and send the session token as a Bearer credential.');
    const principal = await authenticateSession(token);
    if (opts.admin && principal.role !== 'admin') throw forbidden('ADMIN_ONLY', 'Only account admins may do this.');
    (context as AppContext).app.principal = principal;
  },
});
