import type { Approval } from '../db/entities/approval.ts';
import type { ApprovalFacts } from '../domain/approval-facts.ts';
import { FactRows, FormFields } from './approval-fact-rows.tsx';
import { htmlPage, Row } from './html.tsx';
import { PAGE_FIELD } from './page-form.ts';

/** User agents of link previewers and mail scanners: they get the confirmation page, never a decision. */
export const PREVIEW_BOT =
  /bot\b|crawler|spider|preview|slack|facebookexternalhit|whatsapp|telegram|discord|skype|teams|outlook|microsoft office|ms-office|google-safety|barracuda|proofpoint|mimecast|embedly|iframely|pinterest|mastodon|curl-preview/i;

/** A quorum's count: how many approvals it has and how many are still needed. */
const needed = (a: Approval) => Math.max(0, (a.minApprovals ?? 1) - (a.approvals ?? 0));
/** A quorum's count, when it has one (the link pages, approval-page.tsx and review-page.tsx). */
export const Quorum = ({ a }: { a: Approval }) =>
  (a.minApprovals ?? 1) > 1 ? <Row label="Approvals">{`${a.approvals ?? 0} of ${a.minApprovals}; ${needed(a)} more needed`}</Row> : null;

/**
 * The page a link opens: what will be decided, and a button (a form POST, never a GET link). Approving
 * a step with a form shows its fields, filled with their defaults; a required one must be filled in.
 */
export function confirmationPage(
  a: Approval,
  facts: ApprovalFacts,
  decision: 'approve' | 'reject',
  action: string,
  comment: string | undefined,
  pageValue: string,
) {
  const verb = decision === 'approve' ? 'Approve' : 'Reject';
  return htmlPage(
    200,
    `${verb}: ${a.title}`,
    <>
      <dl>
        <FactRows a={a} facts={facts} />
        <Quorum a={a} />
        <Row label="Decision">{verb}</Row>
        {comment ? <Row label="Comment">{comment}</Row> : null}
      </dl>
      <form method="post" action={action}>
        <input type="hidden" name={PAGE_FIELD} value={pageValue} />
        {decision === 'approve' ? <FormFields a={a} /> : null}
        <button type="submit" class={decision}>
          {verb}
        </button>
      </form>
      <p class="note">Nothing has been recorded yet. The decision is made when you press the button.</p>
    </>,
  );
}

/** After the POST: what was recorded (and, for a reviewer's link, as whom). */
export function decidedPage(a: Approval, decision: 'approve' | 'reject', decidedAs?: string) {
  const done = decision === 'approve' ? 'Approved' : 'Rejected';
  return htmlPage(
    200,
    done,
    <>
      <dl>
        <Row label="Step">{a.title}</Row>
        <Row label="Run">{a.executionId}</Row>
        <Row label="Decision">{done}</Row>
        {decidedAs ? <Row label="Decided as">{decidedAs}</Row> : null}
        <Quorum a={a} />
      </dl>
      <p class="note">
        Recorded.{a.status === 'PENDING' ? ` ${needed(a)} more approval${needed(a) === 1 ? '' : 's'} needed.` : ''} You can close this page.
      </p>
    </>,
  );
}
