import type { Route } from '../../../shared/http/route.ts';
import { ChannelList } from '../../../shared/schemas/channels.ts';
import { read, session } from '../../route-kinds.ts';

export const route = {
  method: 'GET',
  path: '/api/channels',
  handler: 'http/channels/list',
  summary: "List the account's approval channels (write-only fields masked)",
  tag: 'Console',
  auth: session,
  grants: read,
  response: ChannelList,
} as const satisfies Route;
