import type { Route } from '../../../../shared/http/route.ts';
import { CONSOLE_FUNCTIONS, consolePage, managesSchedules, refuses } from '../../../route-kinds.ts';

export const route = {
  method: 'POST',
  path: '/console/schedules/new',
  handler: CONSOLE_FUNCTIONS.change,
  summary: 'The "Create schedule" form: "Preview" shows it again with the next fire times; "Create schedule" creates it (303 to the list)',
  tag: 'Console pages',
  auth: consolePage,
  grants: managesSchedules,
  html: true,
  status: 303,
  maxBodyBytes: 64 * 1024,
  errors: [
    ...refuses(400, 'VALIDATION_FAILED'),
    ...refuses(403, 'NOT_WORKFLOW_EDITOR', 'PLAN_LIMIT_REACHED'),
    ...refuses(404, 'WORKFLOW_NOT_FOUND'),
  ],
} as const satisfies Route;
