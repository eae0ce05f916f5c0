import * as z from 'zod';
import type { Route } from '../../../../../shared/http/route.ts';
import { CONSOLE_FUNCTIONS, consolePage, read } from '../../../../route-kinds.ts';

export const route = {
  method: 'GET',
  path: '/console/account',
  handler: CONSOLE_FUNCTIONS.read,
  summary: "The console's account page: the plan, its limits and today's usage; my profile and password",
  tag: 'Console pages',
  auth: consolePage,
  grants: read,
  html: true,
  // `saved`: which form was just saved (a notice). Other parameters are ignored, not refused.
  query: z.object({ saved: z.string().max(16).optional() }),
} as const satisfies Route;
