import type { Route } from '../../../shared/http/route.ts';
import { LinkParams, LinkQuery } from '../../../shared/schemas/approvals.ts';
import { approvalLink, decides, decisionErrors, LINK, refuses } from '../../route-kinds.ts';

export const route = {
  method: 'POST',
  path: LINK,
  handler: 'http/approvals/link-confirm',
  summary: "The confirmation page's button (`confirm=1`)",
  tag: 'Approval Webhook',
  auth: approvalLink,
  grants: decides,
  throttle: 'approval',
  params: LinkParams,
  query: LinkQuery,
  html: true,
  maxBodyBytes: 1024,
  errors: [...refuses(400, 'INVALID_DECISION'), ...decisionErrors],
} as const satisfies Route;
