import type { Route } from '../../../shared/http/route.ts';
import { CONSOLE_FUNCTIONS, consolePage, read } from '../../route-kinds.ts';

export const route = {
  method: 'GET',
  path: '/console',
  handler: CONSOLE_FUNCTIONS.read,
  summary: "The console's overview",
  tag: 'Console pages',
  auth: consolePage,
  grants: read,
  html: true,
} as const satisfies Route;
