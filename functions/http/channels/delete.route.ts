import type { Route } from '../../../shared/http/route.ts';
import { ChannelParams } from '../../../shared/schemas/channels.ts';
import { admin, readWrite } from '../../route-kinds.ts';

export const route = {
  method: 'DELETE',
  path: '/api/channels/{channelId}',
  handler: 'http/channels/delete',
  summary: 'Delete an approval channel (admins); steps that name it send nothing on it',
  tag: 'Console',
  auth: admin,
  grants: readWrite,
  params: ChannelParams,
  status: 204,
} as const satisfies Route;
