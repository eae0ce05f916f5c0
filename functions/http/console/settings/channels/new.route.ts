import * as z from 'zod';
import type { Route } from '../../../../../shared/http/route.ts';
import { CONSOLE_FUNCTIONS, consoleAdmin, read } from '../../../../route-kinds.ts';

export const route = {
  method: 'GET',
  path: '/console/channels/new',
  handler: CONSOLE_FUNCTIONS.read,
  summary: 'The "Create channel" form of a kind (`type`; admins)',
  tag: 'Console pages',
  auth: consoleAdmin,
  grants: read,
  html: true,
  query: z.object({ type: z.string().max(20).optional() }),
} as const satisfies Route;
