import type { Route } from '../../../../../shared/http/route.ts';
import { consoleAdmin, read } from '../../../../route-kinds.ts';

export const route = {
  method: 'GET',
  path: '/console/members/new',
  handler: 'http/console/settings/members/new',
  summary: 'The "Add member" form (admins; changes nothing)',
  tag: 'Console pages',
  auth: consoleAdmin,
  grants: read,
  html: true,
} as const satisfies Route;
