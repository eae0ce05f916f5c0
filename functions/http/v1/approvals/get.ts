// GET /api/v1/approvals/{approvalId}
import { route } from './get.route.ts';
import { http } from '../../../../shared/http/handler.ts';
import { ok } from '../../../../shared/http/responses.ts';
import { approvalDetail } from '../../../../shared/domain/approval-reads.ts';

export const handler = http(route, async ({ principal, params }) => ok(await approvalDetail(principal, params.approvalId)));
