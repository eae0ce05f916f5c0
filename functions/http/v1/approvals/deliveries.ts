// GET /api/v1/approvals/{approvalId}/deliveries
import { route } from './deliveries.route.ts';
import { http } from '../../../../shared/http/handler.ts';
import { ok } from '../../../../shared/http/responses.ts';
import { pageApprovalDeliveries } from '../../../../shared/domain/deliveries.ts';

export const handler = http(route, async ({ principal, params, query }) =>
  ok(await pageApprovalDeliveries(principal, params.approvalId, query.limit, query.cursor)),
);
