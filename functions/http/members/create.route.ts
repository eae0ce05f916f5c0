import type { Route } from '../../../shared/http/route.ts';
import { CreateMemberBody, UserView } from '../../../shared/schemas/identity.ts';
import { admin, readWrite, refuses } from '../../route-kinds.ts';

export const route = {
  method: 'POST',
  path: '/api/members',
  handler: 'http/members/create',
  summary: 'Create a member (admins)',
  tag: 'Console',
  auth: admin,
  grants: readWrite,
  body: CreateMemberBody,
  status: 201,
  response: UserView,
  maxBodyBytes: 4096,
  // scrypt at N = 2^17 takes 128 MiB per hash (passwords.ts); more memory is also more CPU for it.
  memoryMb: 1024,
  errors: [...refuses(409, 'EMAIL_TAKEN', 'SLACK_USER_TAKEN')],
} as const satisfies Route;
