import type { Route } from '../../../shared/http/route.ts';
import { KeyList, KeyListQuery } from '../../../shared/schemas/identity.ts';
import { read, refuses, session } from '../../route-kinds.ts';

export const route = {
  method: 'GET',
  path: '/api/keys',
  handler: 'http/keys/list',
  summary: 'List API keys with usage',
  tag: 'Console',
  auth: session,
  grants: read,
  query: KeyListQuery,
  response: KeyList,
  errors: [...refuses(403, 'ADMIN_ONLY')],
} as const satisfies Route;
