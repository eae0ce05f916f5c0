import type { Route } from '../../../shared/http/route.ts';
import { MemberParams, UpdateMemberBody, UserView } from '../../../shared/schemas/identity.ts';
import { admin, readWrite, refuses } from '../../route-kinds.ts';

export const route = {
  method: 'PUT',
  path: '/api/members/{id}',
  handler: 'http/members/update',
  summary: 'Change a member: role, disabled, Slack user id (admins)',
  tag: 'Console',
  auth: admin,
  grants: readWrite,
  params: MemberParams,
  body: UpdateMemberBody,
  response: UserView,
  maxBodyBytes: 4096,
  errors: [...refuses(409, 'LAST_ADMIN', 'MEMBER_CHANGED', 'SLACK_USER_TAKEN')],
} as const satisfies Route;
