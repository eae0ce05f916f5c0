import type { Approval } from '../db/entities/approval.ts';
import type { ApprovalFacts } from '../domain/approval-facts.ts';
import type { Review } from '../domain/reviews.ts';
import type { Decision } from '../domain/review-links.ts';
import { decidedPage, Quorum } from './approval-page.tsx';
import { FactRows, FormFields } from './approval-fact-rows.tsx';
import { htmlPage } from './html.tsx';
import { PAGE_FIELD } from './page-form.ts';

// The confirmation page of a reviewer's link (shared/domain/reviews.ts): who decides, what, and a
// form whose POST decides. The GET records nothing, whoever (or whatever scanner) opens it.

const VERB: Record<Decision, string> = { approve: 'Approve', reject: 'Reject' };

/** Form inputs are named `field.<name>` (approval-fact-rows.tsx). */
export { FIELD_PREFIX } from './approval-fact-rows.tsx';

/** The page a reviewer's link opens: who decides, the approval and its form, and the decisions the link allows. */
export function reviewPage({ approval: a, reviewer, grant }: Review, facts: ApprovalFacts, action: string, pageValue: string) {
  const only = grant.decisions.length === 1 ? grant.decisions[0] : undefined;
  const title = `${only ? VERB[only] : 'Review'}: ${a.title}`;
  return htmlPage(
    200,
    title,
    <>
      <p class="who">
        You are deciding as <strong>{reviewer.email}</strong>.
      </p>
      <dl>
        <FactRows a={a} facts={facts} />
        <Quorum a={a} />
      </dl>
      <form method="post" action={action}>
        <input type="hidden" name={PAGE_FIELD} value={pageValue} />
        {grant.decisions.includes('approve') ? <FormFields a={a} /> : null}
        <label for="comment">Comment (optional)</label>
        <textarea id="comment" name="comment" maxlength={2000} rows={3} />
        {grant.decisions.map((d) => (
          <button key={d} type="submit" name="decision" value={d} class={d}>
            {VERB[d]}
          </button>
        ))}
      </form>
      <p class="note">Nothing has been recorded yet. The decision is made, as {reviewer.email}, when you press a button.</p>
    </>,
  );
}

/** After the POST: what was recorded, for whom. */
export const reviewedPage = ({ reviewer }: Review, a: Approval, decision: Decision) => decidedPage(a, decision, reviewer.email);
