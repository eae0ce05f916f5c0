import type { Route } from '../../../../../shared/http/route.ts';
import { CONSOLE_FUNCTIONS, consolePage, read } from '../../../../route-kinds.ts';

export const route = {
  method: 'GET',
  path: '/console/secrets',
  handler: CONSOLE_FUNCTIONS.read,
  summary: "The console's secrets: names, rules, who set them, where they are used (never a value)",
  tag: 'Console pages',
  auth: consolePage,
  grants: read,
  html: true,
} as const satisfies Route;
