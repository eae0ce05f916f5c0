import type { Route } from '../../../../shared/http/route.ts';
import { ApprovalParams } from '../../../../shared/schemas/approvals.ts';
import { CONSOLE_FUNCTIONS, consolePage, decides, decisionErrors, refuses } from '../../../route-kinds.ts';

export const route = {
  method: 'POST',
  path: '/console/approvals/{approvalId}',
  handler: CONSOLE_FUNCTIONS.change,
  summary: "The approval page's form: approve (with the form's values) or reject, with a comment, as the signed-in member",
  tag: 'Console pages',
  auth: consolePage,
  grants: decides,
  html: true,
  params: ApprovalParams,
  status: 303,
  errors: [...decisionErrors, ...refuses(400, 'VALIDATION_FAILED', 'INVALID_DECISION')],
} as const satisfies Route;
