// POST /console/runs/{executionId}/deliveries/{deliveryId}/redeliver: the API's redeliver (admins),
// for a delivery of this run (another run's or account's is the same 404), then back to the run's deliveries.
import { route } from './redeliver.route.ts';
import { consoleHttp } from '../../../../shared/console/console-http.tsx';
import { seeOther } from '../../../../shared/console/render.tsx';
import { redeliver } from '../../../../shared/domain/deliveries.ts';
import { requireRunDelivery } from '../../../../shared/domain/run-console.ts';

export const handler = consoleHttp(route, async ({ session, params }) => {
  const { accountId } = session.principal;
  const { executionId, deliveryId } = params;
  await requireRunDelivery(accountId, executionId, deliveryId);
  await redeliver(accountId, deliveryId, Date.now(), session.principal);
  return seeOther(`/console/runs/${executionId}#deliveries`);
});
