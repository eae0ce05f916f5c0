import type { Route } from '../../../shared/http/route.ts';
import { MemberParams } from '../../../shared/schemas/identity.ts';
import { admin, readWrite, refuses } from '../../route-kinds.ts';

export const route = {
  method: 'DELETE',
  path: '/api/members/{id}',
  handler: 'http/members/remove',
  summary: 'Remove a member (admins)',
  tag: 'Console',
  auth: admin,
  grants: readWrite,
  params: MemberParams,
  status: 204,
  errors: [...refuses(409, 'LAST_ADMIN', 'MEMBER_CHANGED')],
} as const satisfies Route;
