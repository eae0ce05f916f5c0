import type { Route } from '../../../../../shared/http/route.ts';
import { consolePage, read } from '../../../../route-kinds.ts';

export const route = {
  method: 'GET',
  path: '/console/secrets',
  handler: 'http/console/settings/secrets/list',
  summary: "The console's secrets: names, rules, who set them, where they are used (never a value)",
  tag: 'Console pages',
  auth: consolePage,
  grants: read,
  html: true,
} as const satisfies Route;
