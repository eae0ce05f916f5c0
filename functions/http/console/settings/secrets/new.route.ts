import type { Route } from '../../../../../shared/http/route.ts';
import { consoleAdmin, read } from '../../../../route-kinds.ts';

export const route = {
  method: 'GET',
  path: '/console/secrets/new',
  handler: 'http/console/settings/secrets/new',
  summary: 'The "Create secret" form (admins)',
  tag: 'Console pages',
  auth: consoleAdmin,
  grants: read,
  html: true,
} as const satisfies Route;
