import type { Route } from '../../../shared/http/route.ts';
import { ChannelParams, ChannelView } from '../../../shared/schemas/channels.ts';
import { read, session } from '../../route-kinds.ts';

export const route = {
  method: 'GET',
  path: '/api/channels/{channelId}',
  handler: 'http/channels/get',
  summary: 'An approval channel (write-only fields masked; Slack: its interactivity Request URL)',
  tag: 'Console',
  auth: session,
  grants: read,
  params: ChannelParams,
  response: ChannelView,
} as const satisfies Route;
