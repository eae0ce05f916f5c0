// POST /console/runs/{executionId}/deliveries/{deliveryId}/redeliver: the API's redeliver (admins),
// for a delivery of this run (another run's or account's is the same 404), then back to the run's deliveries.
import { route } from './redeliver.route.ts';
import { consoleHttp } from '../../../../shared/console/console-http.tsx';
import { seeOther } from '../../../../shared/console/render.tsx';
import { getDelivery } from '../../../../shared/db/entities/delivery.ts';
import { redeliver } from '../../../../shared/domain/deliveries.ts';
import { notFound } from '../../../../shared/errors.ts';

export const handler = consoleHttp(route, async ({ session, params }) => {
  const { accountId } = session.principal;
  const { executionId, deliveryId } = params;
  const d = await getDelivery(accountId, deliveryId);
  if (d?.executionId !== executionId) throw notFound('DELIVERY_NOT_FOUND', `Delivery ${deliveryId} does not exist.`);
  await redeliver(accountId, deliveryId, Date.now(), session.principal);
  return seeOther(`/console/runs/${executionId}#deliveries`);
});
