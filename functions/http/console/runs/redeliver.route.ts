import type { Route } from '../../../../shared/http/route.ts';
import { DeliveryParams } from '../../../../shared/schemas/deliveries.ts';
import { ExecutionParams } from '../../../../shared/schemas/engine.ts';
import { CONSOLE_FUNCTIONS, consoleAdmin, refuses } from '../../../route-kinds.ts';

export const route = {
  method: 'POST',
  path: '/console/runs/{executionId}/deliveries/{deliveryId}/redeliver',
  handler: CONSOLE_FUNCTIONS.change,
  summary: "Send one of a run's deliveries again (admins, as the API's redeliver), then back to the run (303)",
  tag: 'Console pages',
  auth: consoleAdmin,
  // Reads and updates the delivery, and queues it on the notifications queue.
  grants: ['table:read', 'table:write', 'queue:send'],
  html: true,
  status: 303,
  params: ExecutionParams.extend(DeliveryParams.shape),
  errors: [...refuses(409, 'DELIVERY_IN_PROGRESS')],
} as const satisfies Route;
