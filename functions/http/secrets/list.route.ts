import type { Route } from '../../../shared/http/route.ts';
import { SecretList } from '../../../shared/schemas/secrets.ts';
import { session, read } from '../../route-kinds.ts';

export const route = {
  method: 'GET',
  path: '/api/secrets',
  handler: 'http/secrets/list',
  summary: 'List the account secrets (names and dates, never values)',
  tag: 'Console',
  auth: session,
  grants: read,
  response: SecretList,
} as const satisfies Route;
