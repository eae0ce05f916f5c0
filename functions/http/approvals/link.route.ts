import type { Route } from '../../../shared/http/route.ts';
import { LinkParams, LinkQuery } from '../../../shared/schemas/approvals.ts';
import { approvalLink, decides, decisionErrors, LINK, refuses } from '../../route-kinds.ts';

export const route = {
  method: 'GET',
  path: LINK,
  handler: 'http/approvals/link',
  summary: 'One-click link: confirmation page; `confirm=1` decides',
  tag: 'Approval Webhook',
  auth: approvalLink,
  grants: decides,
  throttle: 'approval',
  params: LinkParams,
  query: LinkQuery,
  html: true,
  errors: [...refuses(400, 'INVALID_DECISION'), ...decisionErrors],
} as const satisfies Route;
