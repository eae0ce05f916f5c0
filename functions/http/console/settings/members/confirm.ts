// GET /console/members/{id}/{action} (admins): the confirmation naming the member; another account's
// member answers 404 like an unknown one.
import { route } from './confirm.route.ts';
import { consoleHttp } from '../../../../../shared/console/console-http.tsx';
import { memberFor } from '../../../../../shared/domain/members.ts';
import { memberActionPage } from './action-view.tsx';

export const handler = consoleHttp(route, async ({ session, params }) =>
  memberActionPage(session, await memberFor(session.principal, params.id), params.action),
);
