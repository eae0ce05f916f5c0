import type { Route } from '../../../../../shared/http/route.ts';
import { ChannelParams } from '../../../../../shared/schemas/channels.ts';
import { DeliveryParams } from '../../../../../shared/schemas/deliveries.ts';
import { CONSOLE_FUNCTIONS, consoleAdmin, refuses } from '../../../../route-kinds.ts';

export const route = {
  method: 'POST',
  path: '/console/channels/{channelId}/deliveries/{deliveryId}/redeliver',
  handler: CONSOLE_FUNCTIONS.change,
  summary: "Send one of a channel's deliveries again (admins, as the API's redeliver), then back to the channel (303)",
  tag: 'Console pages',
  auth: consoleAdmin,
  grants: ['table:read', 'table:write', 'queue:send'],
  html: true,
  status: 303,
  params: ChannelParams.extend(DeliveryParams.shape),
  errors: [...refuses(409, 'DELIVERY_IN_PROGRESS')],
} as const satisfies Route;
