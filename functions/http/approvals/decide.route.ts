import type { Route } from '../../../shared/http/route.ts';
import { DecisionBody, DecisionResult } from '../../../shared/schemas/approvals.ts';
import { approvalPost, decides, decisionErrors, refuses } from '../../route-kinds.ts';

export const route = {
  method: 'POST',
  path: '/api/webhook-trigger/approval',
  handler: 'http/approvals/decide',
  summary: 'Decide an approval',
  tag: 'Approval Webhook',
  auth: approvalPost,
  grants: decides,
  throttle: 'approval',
  body: DecisionBody,
  response: DecisionResult,
  maxBodyBytes: 64 * 1024,
  errors: [...refuses(400, 'INVALID_DECISION'), ...decisionErrors],
} as const satisfies Route;
