// GET /console/webhooks/{id}: the webhook (404 for an unknown id, another account's, and a member's
// who is not its creator, as the API), its trigger URL and curl example, stats, recent runs, actions.
import { route } from './webhook.route.ts';
import { consoleHttp } from '../../../../shared/console/console-http.tsx';
import { webhookPageData } from './data.ts';
import { triggerUrl } from './links.ts';
import { webhookPage } from './webhook-view.tsx';

export const handler = consoleHttp(route, async ({ session, params }) =>
  webhookPage(session, await webhookPageData(session.principal, params.id), { triggerUrl: triggerUrl(params.id) }),
);
