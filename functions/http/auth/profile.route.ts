import type { Route } from '../../../shared/http/route.ts';
import { UpdateProfileBody, UserView } from '../../../shared/schemas/identity.ts';
import { readWrite, refuses, session } from '../../route-kinds.ts';

export const route = {
  method: 'PUT',
  path: '/api/auth/me',
  handler: 'http/auth/profile',
  summary: 'Change my own profile: my Slack user id (any member; null removes it)',
  tag: 'Console',
  auth: session,
  grants: readWrite,
  body: UpdateProfileBody,
  response: UserView,
  maxBodyBytes: 4096,
  errors: [...refuses(409, 'SLACK_USER_TAKEN', 'MEMBER_CHANGED')],
} as const satisfies Route;
