import type { Route } from '../../../shared/http/route.ts';
import { DeliveryParams, DeliveryView } from '../../../shared/schemas/deliveries.ts';
import { admin, refuses } from '../../route-kinds.ts';

export const route = {
  method: 'POST',
  path: '/api/deliveries/{deliveryId}/redeliver',
  handler: 'http/deliveries/redeliver',
  summary: 'Send a delivery again (admins): a new attempt, on purpose, with a fresh retry schedule',
  tag: 'Console',
  auth: admin,
  // Reads and updates the delivery, and queues it on the notifications queue.
  grants: ['table:read', 'table:write', 'queue:send'],
  params: DeliveryParams,
  status: 202,
  response: DeliveryView,
  errors: [...refuses(409, 'DELIVERY_IN_PROGRESS')],
} as const satisfies Route;
