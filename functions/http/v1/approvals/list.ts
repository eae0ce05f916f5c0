// GET /api/v1/approvals
import { route } from './list.route.ts';
import { http } from '../../../../shared/http/handler.ts';
import { ok } from '../../../../shared/http/responses.ts';
import { pageApprovals } from '../../../../shared/domain/approval-reads.ts';

export const handler = http(route, async ({ principal, query }) =>
  ok(await pageApprovals(principal, query.status, query.limit, query.cursor)),
);
