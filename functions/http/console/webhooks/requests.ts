// GET /console/webhooks/{id}/requests: the webhook's inbound log, a page of its requests newest first
// (404 for an unknown id, another account's, and a member's who is not its creator, as the API).
import { route } from './requests.route.ts';
import { consoleHttp } from '../../../../shared/console/console-http.tsx';
import { inboundLogPage } from '../../../../shared/domain/inbound-log.ts';
import { requestsPage } from './requests-view.tsx';

export const handler = consoleHttp(route, async ({ session, params, query }) =>
  requestsPage(session, await inboundLogPage(session.principal, params.id, query.limit, query.cursor), query),
);
