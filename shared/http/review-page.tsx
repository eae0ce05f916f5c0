import type { Approval } from '../db/entities/approval.ts';
import type { Review } from '../domain/reviews.ts';
import type { Decision } from '../domain/review-links.ts';
import { decidedPage, Quorum } from './approval-page.tsx';
import { htmlPage, Row } from './html.tsx';
import { PAGE_FIELD } from './page-form.ts';

// The confirmation page of a reviewer's link (shared/domain/reviews.ts): who decides, what, and a
// form whose POST decides. The GET records nothing, whoever (or whatever scanner) opens it.

const VERB: Record<Decision, string> = { approve: 'Approve', reject: 'Reject' };

/** Form inputs are named `field.<name>`; the POST turns them back into the step's form values. */
export const FIELD_PREFIX = 'field.';

type Field = NonNullable<Approval['form']>[number];
const text = (v: unknown) => (v === undefined || v === null ? '' : String(v));

function Input({ f }: { f: Field }) {
  const name = `${FIELD_PREFIX}${f.name}`;
  const id = `f-${f.name}`;
  const Option = ({ value, shown }: { value: unknown; shown: string }) => (
    <option value={text(value)} selected={text(value) === text(f.default)}>
      {shown}
    </option>
  );
  return (
    <>
      <label for={id}>
        {f.label ?? f.name}
        {f.required ? ' (required)' : ''}
      </label>
      {f.type === 'boolean' ? (
        <select id={id} name={name}>
          <Option value={true} shown="Yes" />
          <Option value={false} shown="No" />
        </select>
      ) : f.enum ? (
        <select id={id} name={name}>
          {f.enum.map((v) => (
            <Option key={text(v)} value={v} shown={text(v)} />
          ))}
        </select>
      ) : f.type === 'number' ? (
        <input id={id} name={name} type="number" step="any" value={text(f.default)} />
      ) : (
        <input id={id} name={name} type="text" value={text(f.default)} />
      )}
    </>
  );
}

/** The page a reviewer's link opens: who decides, the approval and its form, and the decisions the link allows. */
export function reviewPage({ approval: a, reviewer, grant }: Review, action: string, pageValue: string) {
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
        <Row label="Step">{a.title}</Row>
        {a.description ? <Row label="Details">{a.description}</Row> : null}
        <Row label="Workflow">{a.workflowId}</Row>
        <Row label="Run">{a.executionId}</Row>
        <Quorum a={a} />
        {a.expiresAt !== undefined ? <Row label="Deadline">{new Date(a.expiresAt).toISOString()}</Row> : null}
      </dl>
      <form method="post" action={action}>
        <input type="hidden" name={PAGE_FIELD} value={pageValue} />
        {grant.decisions.includes('approve') && a.form?.length ? (
          <fieldset>
            <legend>Form</legend>
            {a.form.map((f) => (
              <Input key={f.name} f={f} />
            ))}
          </fieldset>
        ) : null}
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
