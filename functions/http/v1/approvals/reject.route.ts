import type { Route } from '../../../../shared/http/route.ts';
import { ApprovalParams, ApprovalView, RejectBody } from '../../../../shared/schemas/approvals.ts';
import { approvalV1, decides, decisionErrors } from '../../../route-kinds.ts';

export const route = {
  method: 'POST',
  path: '/api/v1/approvals/{approvalId}/reject',
  handler: 'http/v1/approvals/reject',
  summary: 'Reject',
  tag: 'Approvals V1',
  auth: approvalV1,
  grants: decides,
  throttle: 'approval',
  params: ApprovalParams,
  body: RejectBody,
  response: ApprovalView,
  errors: [...decisionErrors],
} as const satisfies Route;
