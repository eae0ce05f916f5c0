import type { Route } from '../../../shared/http/route.ts';
import { ChannelView, CreateChannelBody } from '../../../shared/schemas/channels.ts';
import { admin, refuses, sealsSecrets } from '../../route-kinds.ts';

export const route = {
  method: 'POST',
  path: '/api/channels',
  handler: 'http/channels/create',
  summary: 'Create an approval channel: Slack, email or Teams (admins)',
  tag: 'Console',
  auth: admin,
  grants: sealsSecrets,
  body: CreateChannelBody,
  status: 201,
  response: ChannelView,
  maxBodyBytes: 16 * 1024,
  errors: [...refuses(409, 'CHANNEL_EXISTS')],
} as const satisfies Route;
