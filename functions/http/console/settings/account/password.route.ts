import type { Route } from '../../../../../shared/http/route.ts';
import { CONSOLE_FUNCTIONS, consolePage, readWrite, refuses } from '../../../../route-kinds.ts';

export const route = {
  method: 'POST',
  path: '/console/account/password',
  handler: CONSOLE_FUNCTIONS.change,
  summary:
    'Change my password (the current one first), as POST /api/auth/password (every other session ends); then back to the account (303)',
  tag: 'Console pages',
  auth: consolePage,
  grants: readWrite,
  html: true,
  status: 303,
  maxBodyBytes: 4096,
  // scrypt at N = 2^17 takes 128 MiB per hash (passwords.ts): a check and a new hash.
  memoryMb: 1024,
  errors: [...refuses(400, 'VALIDATION_FAILED'), ...refuses(429, 'RATE_LIMITED')],
} as const satisfies Route;
