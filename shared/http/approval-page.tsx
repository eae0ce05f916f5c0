import type { Approval } from '../db/entities/approval.ts';
import { escapeHtml } from '../escape-html.ts';
import { htmlPage } from './html.ts';
import { PAGE_FIELD } from './page-form.ts';

/** User agents of link previewers and mail scanners: they get the confirmation page, never a decision. */
export const PREVIEW_BOT =
  /bot\b|crawler|spider|preview|slack|facebookexternalhit|whatsapp|telegram|discord|skype|teams|outlook|microsoft office|ms-office|google-safety|barracuda|proofpoint|mimecast|embedly|iframely|pinterest|mastodon|curl-preview/i;

const row = (label: string, value: string) => `<dt>${escapeHtml(label)}</dt><dd>${escapeHtml(value)}</dd>`;
/** A quorum's count: how many approvals it has and how many are still needed. */
const needed = (a: Approval) => Math.max(0, (a.minApprovals ?? 1) - (a.approvals ?? 0));
const quorumRow = (a: Approval) =>
  (a.minApprovals ?? 1) > 1 ? row('Approvals', `${a.approvals ?? 0} of ${a.minApprovals}; ${needed(a)} more needed`) : '';

/** The page a link opens: what will be decided, and a button (a form POST, never a GET link). */
export function confirmationPage(
  a: Approval,
  decision: 'approve' | 'reject',
  action: string,
  comment: string | undefined,
  pageValue: string,
) {
  const verb = decision === 'approve' ? 'Approve' : 'Reject';
  return htmlPage(
    200,
    `${verb}: ${a.title}`,
    `<dl>${row('Step', a.title)}${a.description ? row('Details', a.description) : ''}${row('Workflow', a.workflowId)}${row('Run', a.executionId)}${quorumRow(a)}${row('Decision', verb)}${
      comment ? row('Comment', comment) : ''
    }</dl>
<form method="post" action="${escapeHtml(action)}"><input type="hidden" name="${PAGE_FIELD}" value="${escapeHtml(pageValue)}"><button type="submit" class="${decision}">${verb}</button></form>
<p class="note">Nothing has been recorded yet. The decision is made when you press the button.</p>`,
  );
}

export function decidedPage(a: Approval, decision: 'approve' | 'reject') {
  const done = decision === 'approve' ? 'Approved' : 'Rejected';
  return htmlPage(
    200,
    done,
    `<dl>${row('Step', a.title)}${row('Run', a.executionId)}${row('Decision', done)}${quorumRow(a)}</dl><p class="note">Recorded.${
      a.status === 'PENDING' ? ` ${needed(a)} more approval${needed(a) === 1 ? '' : 's'} needed.` : ''
    } You can close this page.</p>`,
  );
}
