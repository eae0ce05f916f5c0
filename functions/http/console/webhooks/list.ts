// GET /console/webhooks: the webhooks the API lists to this user (own; admins: the account's), with
// their workflow, how callers authenticate, enabled, and the last trigger.
import { route } from './list.route.ts';
import { consoleHttp } from '../../../../shared/console/console-http.tsx';
import { listData } from './data.ts';
import { webhooksPage } from './list-view.tsx';

export const handler = consoleHttp(route, async ({ session }) => webhooksPage(session, await listData(session.principal)));
