import type { Route } from '../../../../shared/http/route.ts';
import { ApprovalParams } from '../../../../shared/schemas/approvals.ts';
import { CONSOLE_FUNCTIONS, consolePage, read, refuses } from '../../../route-kinds.ts';

export const route = {
  method: 'GET',
  path: '/console/approvals/{approvalId}',
  handler: CONSOLE_FUNCTIONS.read,
  summary: "An approval's page: what it asks, its form, its decision and history",
  tag: 'Console pages',
  auth: consolePage,
  grants: read,
  html: true,
  params: ApprovalParams,
  errors: refuses(404, 'APPROVAL_NOT_FOUND'),
} as const satisfies Route;
