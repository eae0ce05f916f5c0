import type { Route } from '../../../../shared/http/route.ts';
import { ApprovalParams, ApprovalView, ApproveBody } from '../../../../shared/schemas/approvals.ts';
import { approvalV1, decides, decisionErrors } from '../../../route-kinds.ts';

export const route = {
  method: 'POST',
  path: '/api/v1/approvals/{approvalId}/approve',
  handler: 'http/v1/approvals/approve',
  summary: 'Approve (optionally with edited form data)',
  tag: 'Approvals V1',
  auth: approvalV1,
  grants: decides,
  throttle: 'approval',
  params: ApprovalParams,
  body: ApproveBody,
  response: ApprovalView,
  errors: [...decisionErrors],
} as const satisfies Route;
