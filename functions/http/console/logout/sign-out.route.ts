import type { Route } from '../../../../shared/http/route.ts';
import { CONSOLE_FUNCTIONS, consolePage, readWrite } from '../../../route-kinds.ts';

export const route = {
  method: 'POST',
  path: '/console/logout',
  handler: CONSOLE_FUNCTIONS.change,
  summary: 'Sign out: ends the session and clears its cookie',
  tag: 'Console pages',
  auth: consolePage,
  grants: readWrite,
  html: true,
  status: 303,
} as const satisfies Route;
