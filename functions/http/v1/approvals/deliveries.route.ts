import type { Route } from '../../../../shared/http/route.ts';
import { ApprovalParams } from '../../../../shared/schemas/approvals.ts';
import { DeliveryList } from '../../../../shared/schemas/deliveries.ts';
import { PageQuery } from '../../../../shared/schemas/engine.ts';
import { approvalV1, cursorErrors, read, refuses } from '../../../route-kinds.ts';

export const route = {
  method: 'GET',
  path: '/api/v1/approvals/{approvalId}/deliveries',
  handler: 'http/v1/approvals/deliveries',
  summary: "The delivery log of an approval's messages, oldest first (its reviewers)",
  tag: 'Approvals V1',
  auth: approvalV1,
  grants: read,
  throttle: 'approval',
  params: ApprovalParams,
  query: PageQuery,
  response: DeliveryList,
  errors: [...cursorErrors, ...refuses(403, 'NOT_A_REVIEWER')],
} as const satisfies Route;
