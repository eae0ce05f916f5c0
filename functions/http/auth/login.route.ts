import type { Route } from '../../../shared/http/route.ts';
import { LoginBody, LoginResult } from '../../../shared/schemas/identity.ts';
import { none, readWrite, refuses } from '../../route-kinds.ts';

export const route = {
  method: 'POST',
  path: '/api/auth/login',
  handler: 'http/auth/login',
  summary: 'Log in to the console',
  tag: 'Console',
  auth: none,
  grants: readWrite,
  throttle: 'login',
  body: LoginBody,
  response: LoginResult,
  maxBodyBytes: 4096,
  // scrypt at N = 2^17 takes 128 MiB per hash (passwords.ts); more memory is also more CPU for it.
  memoryMb: 1024,
  errors: [...refuses(401, 'INVALID_CREDENTIALS'), ...refuses(403, 'MEMBER_DISABLED'), ...refuses(429, 'RATE_LIMITED')],
} as const satisfies Route;
