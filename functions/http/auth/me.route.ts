import type { Route } from '../../../shared/http/route.ts';
import { Me } from '../../../shared/schemas/identity.ts';
import { read, session } from '../../route-kinds.ts';

export const route = {
  method: 'GET',
  path: '/api/auth/me',
  handler: 'http/auth/me',
  summary: 'The logged-in user and account',
  tag: 'Console',
  auth: session,
  grants: read,
  response: Me,
} as const satisfies Route;
