import type { Route } from '../../../../shared/http/route.ts';
import { CONSOLE_FUNCTIONS, consolePage, decides, refuses } from '../../../route-kinds.ts';

export const route = {
  method: 'POST',
  path: '/console/approvals',
  handler: CONSOLE_FUNCTIONS.change,
  summary:
    "The inbox's form: approve or reject one approval (a row's button) or the selected ones, each decided as the approval page decides it; back to the inbox with a summary",
  tag: 'Console pages',
  auth: consolePage,
  grants: decides,
  html: true,
  status: 303,
  errors: refuses(400, 'VALIDATION_FAILED', 'INVALID_DECISION'),
} as const satisfies Route;
