// POST /console/approvals/{approvalId}: the approval page's form decides, as the signed-in member, through the
// one `decide` of every channel (reviewers only, quorum, exactly once, audited with channel `console`).
import { route } from './decide.route.ts';
import { consoleHttp } from '../../../../shared/console/console-http.tsx';
import { approvalPageData } from '../../../../shared/domain/approval-console.ts';
import { seeOther } from '../../../../shared/console/render.tsx';
import { decide, formValuesOf, requireApproval } from '../../../../shared/domain/approvals.ts';
import { AppError, type FieldError } from '../../../../shared/errors.ts';
import { httpStatus } from '../../../../shared/http-status.ts';
import { type Attempt, FIELD_PREFIX } from './approval-form.tsx';
import { approvalPage } from './approval-view.tsx';

/** What the page says when the domain refuses (the approval page again, with the refusal's status). */
function noticeOf(e: AppError, status: string): string {
  switch (e.code) {
    case 'APPROVAL_ALREADY_HANDLED':
      return status === 'PENDING'
        ? `This approval was already handled: nothing was recorded. ${e.message}`
        : `This approval was already handled (${status}): nothing was recorded.`;
    case 'REVIEWER_ALREADY_DECIDED':
      return 'You have already decided this approval: nothing more was recorded.';
    case 'NOT_A_REVIEWER':
      return 'You are not a reviewer of this approval: nothing was recorded.';
    case 'VALIDATION_FAILED':
      return 'Check the form: nothing was recorded.';
    default:
      return `${e.message} Nothing was recorded.`;
  }
}

export const handler = consoleHttp(route, async ({ session, params, form, request, event }) => {
  const p = session.principal;
  const sent: Record<string, string> = {};
  for (const [k, v] of form) if (k.startsWith(FIELD_PREFIX) && v !== '') sent[k.slice(FIELD_PREFIX.length)] = v;
  const comment = form.get('comment')?.trim().slice(0, 2000) || undefined;
  const decision = form.get('decision');
  const typed: Partial<Attempt> = { values: sent, comment: form.get('comment') ?? undefined };
  try {
    if (decision !== 'approve' && decision !== 'reject')
      throw new AppError('invalid', 'INVALID_DECISION', 'Bad request', 'Choose "Approve" or "Reject".');
    // The step's form says how to read the fields' text (booleans, numbers); an unknown id is the same 404 page.
    const approval = decision === 'approve' ? await requireApproval(p.accountId, params.approvalId) : undefined;
    await decide({
      principal: p,
      approvalId: params.approvalId,
      decision,
      comment,
      formData: approval ? formValuesOf(approval, sent) : undefined,
      channel: 'console',
      sourceIp: request.sourceIp,
      userAgent: event.headers['user-agent'],
    });
  } catch (e) {
    // Refusals (a bad form, not a reviewer, already decided) show the page again, with why; a 404 is the 404 page.
    if (!(e instanceof AppError) || !['invalid', 'forbidden', 'conflict'].includes(e.kind)) throw e;
    const errors = Object.fromEntries(
      ((e.extra.body?.errors as FieldError[] | undefined) ?? []).map((f) => [f.path.replace(/^formData\./, ''), f.message]),
    );
    const data = await approvalPageData(p, params.approvalId);
    return approvalPage(session, data, Date.now(), { ...typed, status: httpStatus(e), notice: noticeOf(e, data.approval.status), errors });
  }
  return seeOther(`/console/approvals/${params.approvalId}`);
});
