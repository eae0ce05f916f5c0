import type { Route } from '../../../../../shared/http/route.ts';
import { ChannelParams } from '../../../../../shared/schemas/channels.ts';
import { CONSOLE_FUNCTIONS, consolePage, read } from '../../../../route-kinds.ts';

export const route = {
  method: 'GET',
  path: '/console/channels/{channelId}',
  handler: CONSOLE_FUNCTIONS.read,
  summary: "A channel's page: settings (masked), edit and test (admins), recent deliveries",
  tag: 'Console pages',
  auth: consolePage,
  grants: read,
  html: true,
  params: ChannelParams,
} as const satisfies Route;
