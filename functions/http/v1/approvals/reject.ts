// POST /api/v1/approvals/{approvalId}/reject
import { route } from './reject.route.ts';
import { http } from '../../../../shared/http/handler.ts';
import { ok } from '../../../../shared/http/responses.ts';
import { approvalView } from '../../../../shared/domain/approval-reads.ts';
import { decide } from '../../../../shared/domain/approvals.ts';

export const handler = http(route, async ({ principal, params, body, event, request }) =>
  ok(
    approvalView(
      await decide({
        principal,
        approvalId: params.approvalId,
        decision: 'reject',
        comment: body.comment,
        channel: 'v1',
        sourceIp: request.sourceIp,
        userAgent: event.headers['user-agent'],
      }),
    ),
  ),
);
