import type { Route } from '../../../shared/http/route.ts';
import { readWrite, session } from '../../route-kinds.ts';

export const route = {
  method: 'POST',
  path: '/api/auth/logout',
  handler: 'http/auth/logout',
  summary: 'Revoke the current session',
  tag: 'Console',
  auth: session,
  grants: readWrite,
  status: 204,
} as const satisfies Route;
