import type { Route } from '../../../shared/http/route.ts';
import { ChannelParams, ChannelTestResult, TestChannelBody } from '../../../shared/schemas/channels.ts';
import { admin } from '../../route-kinds.ts';

export const route = {
  method: 'POST',
  path: '/api/channels/{channelId}/test',
  handler: 'http/channels/test',
  summary: "Send a test message on an approval channel and report the provider's answer (admins)",
  tag: 'Console',
  auth: admin,
  // Besides the notify worker, only this route sends mail: a test is the provider's answer, now.
  grants: ['table:read', 'table:audit', 'secrets:decrypt', 'email:send'],
  params: ChannelParams,
  body: TestChannelBody,
  response: ChannelTestResult,
  maxBodyBytes: 4096,
  timeoutSeconds: 15,
} as const satisfies Route;
