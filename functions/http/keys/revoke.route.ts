import type { Route } from '../../../shared/http/route.ts';
import { KeyParams } from '../../../shared/schemas/identity.ts';
import { readWrite, refuses, session } from '../../route-kinds.ts';

export const route = {
  method: 'DELETE',
  path: '/api/keys/{id}',
  handler: 'http/keys/revoke',
  summary: 'Revoke an API key',
  tag: 'Console',
  auth: session,
  grants: readWrite,
  params: KeyParams,
  status: 204,
  errors: [...refuses(403, 'NOT_KEY_OWNER')],
} as const satisfies Route;
