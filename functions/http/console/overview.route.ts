import type { Route } from '../../../shared/http/route.ts';
import { consolePage, read } from '../../route-kinds.ts';

export const route = {
  method: 'GET',
  path: '/console',
  handler: 'http/console/overview',
  summary: "The console's overview",
  tag: 'Console pages',
  auth: consolePage,
  grants: read,
  html: true,
} as const satisfies Route;
