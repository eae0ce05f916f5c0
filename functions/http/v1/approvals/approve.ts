// POST /api/v1/approvals/{approvalId}/approve
import { route } from './approve.route.ts';
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
        decision: 'approve',
        comment: body.comment,
        formData: body.formData,
        channel: 'v1',
        sourceIp: request.sourceIp,
        userAgent: event.headers['user-agent'],
      }),
    ),
  ),
);
