import type { Route } from '../../../../../shared/http/route.ts';
import { CONSOLE_FUNCTIONS, consolePage, read } from '../../../../route-kinds.ts';

export const route = {
  method: 'GET',
  path: '/console/keys/new',
  handler: CONSOLE_FUNCTIONS.read,
  summary: 'The "Create key" form (changes nothing)',
  tag: 'Console pages',
  auth: consolePage,
  grants: read,
  html: true,
} as const satisfies Route;
