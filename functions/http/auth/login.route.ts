import type { Route } from '../../../shared/http/route.ts';
import { LoginBody, LoginResult } from '../../../shared/schemas/identity.ts';
import { none, readWrite } from '../../route-kinds.ts';

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
} as const satisfies Route;
