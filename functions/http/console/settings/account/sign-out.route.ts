import type { Route } from '../../../../../shared/http/route.ts';
import { CONSOLE_FUNCTIONS, consolePage, readWrite, refuses } from '../../../../route-kinds.ts';

export const route = {
  method: 'POST',
  path: '/console/account/sign-out-everywhere',
  handler: CONSOLE_FUNCTIONS.change,
  summary: 'Sign out everywhere, as POST /api/auth/logout-everywhere: every session ends, this one too; then the sign-in page (303)',
  tag: 'Console pages',
  auth: consolePage,
  grants: readWrite,
  html: true,
  status: 303,
  errors: [...refuses(409, 'CONFLICT')],
} as const satisfies Route;
