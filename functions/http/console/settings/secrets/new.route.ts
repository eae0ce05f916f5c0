import type { Route } from '../../../../../shared/http/route.ts';
import { CONSOLE_FUNCTIONS, consoleAdmin, read } from '../../../../route-kinds.ts';

export const route = {
  method: 'GET',
  path: '/console/secrets/new',
  handler: CONSOLE_FUNCTIONS.read,
  summary: 'The "Create secret" form (admins)',
  tag: 'Console pages',
  auth: consoleAdmin,
  grants: read,
  html: true,
} as const satisfies Route;
