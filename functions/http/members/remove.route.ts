import type { Route } from '../../../shared/http/route.ts';
import { MemberParams } from '../../../shared/schemas/identity.ts';
import { admin, readWrite } from '../../route-kinds.ts';

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
} as const satisfies Route;
