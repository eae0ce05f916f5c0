import type { Route } from '../../../shared/http/route.ts';
import { APPROVAL_LINK_PATH } from '../../../shared/links.ts';
import { LinkParams, LinkQuery } from '../../../shared/schemas/approvals.ts';
import { approvalLink, read } from '../../route-kinds.ts';

export const route = {
  method: 'HEAD',
  path: APPROVAL_LINK_PATH,
  handler: 'http/approvals/link-head',
  summary: 'One-click link, HEAD: the confirmation page headers only',
  tag: 'Approval Webhook',
  auth: approvalLink,
  grants: read,
  throttle: 'approval',
  params: LinkParams,
  query: LinkQuery,
  html: true,
} as const satisfies Route;
