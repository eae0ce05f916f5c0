import type { Route } from '../../../shared/http/route.ts';
import { readWrite, refuses, session } from '../../route-kinds.ts';

export const route = {
  method: 'POST',
  path: '/api/auth/logout-everywhere',
  handler: 'http/auth/logout-everywhere',
  summary: 'Sign out everywhere: end every session of mine, this one included (console and API; API keys stay)',
  tag: 'Console',
  auth: session,
  grants: readWrite,
  status: 204,
  errors: [...refuses(409, 'CONFLICT')],
} as const satisfies Route;
