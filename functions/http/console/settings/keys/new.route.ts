import type { Route } from '../../../../../shared/http/route.ts';
import { consolePage, read } from '../../../../route-kinds.ts';

export const route = {
  method: 'GET',
  path: '/console/keys/new',
  handler: 'http/console/settings/keys/new',
  summary: 'The "Create key" form (changes nothing)',
  tag: 'Console pages',
  auth: consolePage,
  grants: read,
  html: true,
} as const satisfies Route;
