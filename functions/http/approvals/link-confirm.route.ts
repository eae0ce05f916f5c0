import type { Route } from '../../../shared/http/route.ts';
import { APPROVAL_LINK_PATH } from '../../../shared/links.ts';
import { LinkParams, LinkQuery } from '../../../shared/schemas/approvals.ts';
import { approvalLink, decides, decisionErrors, refuses } from '../../route-kinds.ts';

export const route = {
  method: 'POST',
  path: APPROVAL_LINK_PATH,
  handler: 'http/approvals/link-confirm',
  summary: "The confirmation page's button (`confirm=1`)",
  tag: 'Approval Webhook',
  auth: approvalLink,
  grants: decides,
  throttle: 'approval',
  params: LinkParams,
  query: LinkQuery,
  html: true,
  maxBodyBytes: 16 * 1024,
  errors: [...refuses(400, 'INVALID_DECISION'), ...decisionErrors],
} as const satisfies Route;
