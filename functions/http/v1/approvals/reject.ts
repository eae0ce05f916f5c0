// POST /api/v1/approvals/{approvalId}/reject
import { route } from '../../../routes.ts';
import { http } from '../../../../shared/http/handler.ts';
import { ok } from '../../../../shared/http/responses.ts';
import { approvalView, decide } from '../../../../shared/domain/approvals.ts';

export const handler = http(route('POST /api/v1/approvals/{approvalId}/reject'), async ({ principal, params, body, event, request }) =>
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
