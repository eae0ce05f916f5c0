import * as z from 'zod';
import type { Route } from '../../../../../shared/http/route.ts';
import { CONSOLE_FUNCTIONS, consolePage, read, refuses } from '../../../../route-kinds.ts';

export const route = {
  method: 'GET',
  path: '/console/keys',
  handler: CONSOLE_FUNCTIONS.read,
  summary: "The console's API keys: mine, or (admins) all of the account's",
  tag: 'Console pages',
  auth: consolePage,
  grants: read,
  // `all=1`: every key of the account (admins). Other parameters are ignored, not refused.
  query: z.object({ all: z.string().max(16).optional() }),
  html: true,
  errors: [...refuses(403, 'ADMIN_ONLY')],
} as const satisfies Route;
