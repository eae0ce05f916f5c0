import type { Route } from '../../../../../shared/http/route.ts';
import { CONSOLE_FUNCTIONS, consolePage, readWrite, refuses } from '../../../../route-kinds.ts';

export const route = {
  method: 'POST',
  path: '/console/account/profile',
  handler: CONSOLE_FUNCTIONS.change,
  summary: 'Save my profile (Slack user id), as PUT /api/auth/me; then back to the account (303)',
  tag: 'Console pages',
  auth: consolePage,
  grants: readWrite,
  html: true,
  status: 303,
  maxBodyBytes: 4096,
  errors: [...refuses(400, 'VALIDATION_FAILED'), ...refuses(409, 'SLACK_USER_TAKEN', 'MEMBER_CHANGED')],
} as const satisfies Route;
