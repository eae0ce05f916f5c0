import type { Route } from '../../../../shared/http/route.ts';
import { CONSOLE_FUNCTIONS, none, readWrite, refuses } from '../../../route-kinds.ts';

export const route = {
  method: 'POST',
  path: '/console/login',
  handler: CONSOLE_FUNCTIONS.change,
  summary: "Sign in (form: email, password, next, and the sign-in page's pre-session value): sets the session cookie",
  tag: 'Console pages',
  auth: none,
  grants: readWrite,
  throttle: 'login',
  html: true,
  maxBodyBytes: 4096,
  // scrypt at N = 2^17 takes 128 MiB per hash (passwords.ts), as POST /api/auth/login.
  memoryMb: 1024,
  status: 303,
  errors: [...refuses(401, 'INVALID_CREDENTIALS'), ...refuses(403, 'PAGE_FORM_INVALID'), ...refuses(429, 'RATE_LIMITED')],
} as const satisfies Route;
