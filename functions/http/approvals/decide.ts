// POST /api/webhook-trigger/approval
import { route } from './decide.route.ts';
import { http } from '../../../shared/http/handler.ts';
import { ok } from '../../../shared/http/responses.ts';
import { badRequest } from '../../../shared/errors.ts';
import { parseDecision } from '../../../shared/schemas/approvals.ts';
import { decide } from '../../../shared/domain/approvals.ts';

export const handler = http(route, async ({ principal, body, event, request }) => {
  const decision = parseDecision(body.decision);
  if (!decision) throw badRequest('INVALID_DECISION', 'decision must be approve or reject.');
  await decide({
    principal,
    approvalId: body.approvalId,
    decision,
    comment: body.comment,
    channel: 'post',
    sourceIp: request.sourceIp,
    userAgent: event.headers['user-agent'],
  });
  return ok({ ok: true, approvalId: body.approvalId, decision });
});
