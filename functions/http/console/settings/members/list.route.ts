import type { Route } from '../../../../../shared/http/route.ts';
import { CONSOLE_FUNCTIONS, consolePage, read } from '../../../../route-kinds.ts';

export const route = {
  method: 'GET',
  path: '/console/members',
  handler: CONSOLE_FUNCTIONS.read,
  summary: "The console's members: everyone reads; admins add, change and remove",
  tag: 'Console pages',
  auth: consolePage,
  grants: read,
  html: true,
} as const satisfies Route;
