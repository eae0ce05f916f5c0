import type { Route } from '../../../shared/http/route.ts';
import { ChannelParams, ChannelView, UpdateChannelBody } from '../../../shared/schemas/channels.ts';
import { admin, refuses } from '../../route-kinds.ts';

export const route = {
  method: 'PUT',
  path: '/api/channels/{channelId}',
  handler: 'http/channels/update',
  summary: 'Change an approval channel; write-only fields not sent stay (admins)',
  tag: 'Console',
  auth: admin,
  // Changing one write-only field opens the others, which are sealed together again.
  grants: ['table:read', 'table:write', 'secrets:encrypt', 'secrets:decrypt'],
  params: ChannelParams,
  body: UpdateChannelBody,
  response: ChannelView,
  maxBodyBytes: 16 * 1024,
  errors: [...refuses(400, 'IMMUTABLE_FIELD'), ...refuses(409, 'CHANNEL_EXISTS', 'CHANNEL_CHANGED')],
} as const satisfies Route;
