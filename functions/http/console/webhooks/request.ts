// GET /console/webhooks/{id}/requests/{requestId}: one request of the inbound log (404 page when the log
// does not hold it, or the webhook is not the caller's to see).
import { route } from './request.route.ts';
import { consoleHttp } from '../../../../shared/console/console-http.tsx';
import { inboundLogRequest } from '../../../../shared/domain/inbound-log.ts';
import { requestPage } from './request-view.tsx';

export const handler = consoleHttp(route, async ({ session, params }) =>
  requestPage(session, await inboundLogRequest(session.principal, params.id, params.requestId)),
);
