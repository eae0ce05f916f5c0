// POST /console/approvals: the inbox's form decides one approval (a row's Approve or Reject button sends
// `approve=<id>` or `reject=<id>`) or the selected ones (`approvalId`, once per ticked box, and the pressed
// "Approve selected" or "Reject selected" as `decision`), each through `decideMany`: the approval page's
// `decide` once per approval (reviewers only, quorum, exactly once, its own audit record, channel `console`).
// Then back to the inbox (its sort and scope kept) with a summary of what became of each (POST-redirect-GET).
import { route } from './decide-many.route.ts';
import { consoleHttp } from '../../../../shared/console/console-http.tsx';
import { seeOther } from '../../../../shared/console/render.tsx';
import { BULK_MAX, decideMany } from '../../../../shared/domain/approval-inbox.ts';
import { AppError, validationFailed } from '../../../../shared/errors.ts';

export const handler = consoleHttp(route, async ({ session, form, request, event }) => {
  const p = session.principal;
  const row = form.has('approve') ? 'approve' : form.has('reject') ? 'reject' : undefined;
  const decision = row ?? form.get('decision');
  const ids = row ? [form.get(row) ?? ''] : form.getAll('approvalId');
  if (decision !== 'approve' && decision !== 'reject')
    throw new AppError('invalid', 'INVALID_DECISION', 'Bad request', 'Choose "Approve selected" or "Reject selected".');
  if (ids.length > BULK_MAX) throw validationFailed([{ path: 'approvalId', message: `at most ${BULK_MAX} approvals at once` }]);
  const counts = await decideMany(
    { principal: p, decision, channel: 'console', sourceIp: request.sourceIp, userAgent: event.headers['user-agent'] },
    ids,
  );
  const back = new URLSearchParams();
  if (form.get('all') === '1' && p.role === 'admin') back.set('all', '1');
  if (form.get('sort') === 'deadline') back.set('sort', 'deadline');
  back.set('done', '1');
  for (const [outcome, n] of Object.entries(counts)) if (n > 0) back.set(outcome, String(n));
  return seeOther(`/console/approvals?${back}`);
});
