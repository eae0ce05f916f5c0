import * as z from 'zod';
import type { Route } from '../../../../../shared/http/route.ts';
import { ChannelParams } from '../../../../../shared/schemas/channels.ts';
import { CONSOLE_FUNCTIONS, consoleAdmin, refuses } from '../../../../route-kinds.ts';

export const route = {
  method: 'POST',
  path: '/console/channels/{channelId}/{action}',
  handler: CONSOLE_FUNCTIONS.secrets,
  summary: 'Save a channel\'s settings, "Send test" (the answer shown), or the confirmed "Delete" (admins), as the API does',
  tag: 'Console pages',
  auth: consoleAdmin,
  // Saving seals the write-only settings; a test opens them and sends (mail too).
  grants: ['table:read', 'table:write', 'secrets:encrypt', 'secrets:decrypt', 'email:send'],
  html: true,
  status: 303,
  maxBodyBytes: 16 * 1024,
  timeoutSeconds: 15,
  params: ChannelParams.extend({ action: z.enum(['edit', 'test', 'delete']) }),
  errors: [...refuses(400, 'VALIDATION_FAILED', 'IMMUTABLE_FIELD'), ...refuses(409, 'CHANNEL_EXISTS', 'CHANNEL_CHANGED')],
} as const satisfies Route;
