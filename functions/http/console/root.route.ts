import type { Route } from '../../../shared/http/route.ts';
import { none } from '../../route-kinds.ts';

export const route = {
  method: 'GET',
  path: '/',
  handler: 'http/console/root',
  summary: 'The service root: redirects to the console',
  tag: 'Console pages',
  auth: none,
  grants: [],
  html: true,
  status: 302,
} as const satisfies Route;
