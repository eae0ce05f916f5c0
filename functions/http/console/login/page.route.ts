import * as z from 'zod';
import type { Route } from '../../../../shared/http/route.ts';
import { CONSOLE_FUNCTIONS, none } from '../../../route-kinds.ts';

export const route = {
  method: 'GET',
  path: '/console/login',
  handler: CONSOLE_FUNCTIONS.read,
  summary: 'The sign-in page',
  tag: 'Console pages',
  auth: none,
  grants: [],
  html: true,
  query: z.object({ next: z.string().max(2000).optional() }),
} as const satisfies Route;
