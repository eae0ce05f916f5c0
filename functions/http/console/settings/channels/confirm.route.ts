import type { Route } from '../../../../../shared/http/route.ts';
import { ChannelParams } from '../../../../../shared/schemas/channels.ts';
import { CONSOLE_FUNCTIONS, consoleAdmin, read } from '../../../../route-kinds.ts';

export const route = {
  method: 'GET',
  path: '/console/channels/{channelId}/delete',
  handler: CONSOLE_FUNCTIONS.read,
  summary: 'Confirm deleting a channel (admins): a page that names it and asks, changing nothing',
  tag: 'Console pages',
  auth: consoleAdmin,
  grants: read,
  html: true,
  params: ChannelParams,
} as const satisfies Route;
