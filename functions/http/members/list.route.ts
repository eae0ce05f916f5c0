import type { Route } from '../../../shared/http/route.ts';
import { MemberList } from '../../../shared/schemas/identity.ts';
import { read, session } from '../../route-kinds.ts';

export const route = {
  method: 'GET',
  path: '/api/members',
  handler: 'http/members/list',
  summary: 'List the account members',
  tag: 'Console',
  auth: session,
  grants: read,
  response: MemberList,
} as const satisfies Route;
