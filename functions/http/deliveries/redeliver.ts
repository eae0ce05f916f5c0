// POST /api/deliveries/{deliveryId}/redeliver
import { route } from './redeliver.route.ts';
import { http } from '../../../shared/http/handler.ts';
import { json } from '../../../shared/http/responses.ts';
import { redeliver } from '../../../shared/domain/deliveries.ts';

export const handler = http(route, async ({ principal, params }) =>
  json(202, await redeliver(principal.accountId, params.deliveryId, Date.now(), principal)),
);
