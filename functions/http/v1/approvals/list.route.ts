import type { Route } from '../../../../shared/http/route.ts';
import { ApprovalList, ApprovalsQuery } from '../../../../shared/schemas/approvals.ts';
import { approvalV1, cursorErrors, read } from '../../../route-kinds.ts';

export const route = {
  method: 'GET',
  path: '/api/v1/approvals',
  handler: 'http/v1/approvals/list',
  summary: 'Approvals the key owner may decide (PENDING by default)',
  tag: 'Approvals V1',
  auth: approvalV1,
  grants: read,
  throttle: 'approval',
  query: ApprovalsQuery,
  response: ApprovalList,
  errors: [...cursorErrors],
} as const satisfies Route;
