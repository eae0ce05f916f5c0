import type { Route } from '../../../../shared/http/route.ts';
import { ApprovalParams, ApprovalView } from '../../../../shared/schemas/approvals.ts';
import { approvalV1, read, refuses } from '../../../route-kinds.ts';

export const route = {
  method: 'GET',
  path: '/api/v1/approvals/{approvalId}',
  handler: 'http/v1/approvals/get',
  summary: 'An approval with form, context and history',
  tag: 'Approvals V1',
  auth: approvalV1,
  grants: read,
  throttle: 'approval',
  params: ApprovalParams,
  response: ApprovalView,
  errors: [...refuses(403, 'NOT_A_REVIEWER')],
} as const satisfies Route;
