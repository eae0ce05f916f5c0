import type { Approval } from '../db/entities/approval.ts';
import type { Review } from '../domain/reviews.ts';
import type { Decision } from '../domain/review-links.ts';
import { escapeHtml } from '../escape-html.ts';
import { htmlPage } from './html.ts';
import { PAGE_FIELD } from './page-form.ts';

// The confirmation page of a reviewer's link (shared/domain/reviews.ts): who decides, what, and a
// form whose POST decides. The GET records nothing, whoever (or whatever scanner) opens it.

const row = (label: string, value: string) => `<dt>${escapeHtml(label)}</dt><dd>${escapeHtml(value)}</dd>`;
const needed = (a: Approval) => Math.max(0, (a.minApprovals ?? 1) - (a.approvals ?? 0));
const quorumRow = (a: Approval) =>
  (a.minApprovals ?? 1) > 1 ? row('Approvals', `${a.approvals ?? 0} of ${a.minApprovals}; ${needed(a)} more needed`) : '';
const VERB: Record<Decision, string> = { approve: 'Approve', reject: 'Reject' };

/** Form inputs are named `field.<name>`; the POST turns them back into the step's form values. */
export const FIELD_PREFIX = 'field.';

type Field = NonNullable<Approval['form']>[number];
const text = (v: unknown) => (v === undefined || v === null ? '' : String(v));

function input(f: Field): string {
  const name = escapeHtml(`${FIELD_PREFIX}${f.name}`);
  const id = escapeHtml(`f-${f.name}`);
  const label = `<label for="${id}">${escapeHtml(f.label ?? f.name)}${f.required ? ' (required)' : ''}</label>`;
  const option = (value: unknown, shown: string) =>
    `<option value="${escapeHtml(text(value))}"${text(value) === text(f.default) ? ' selected' : ''}>${escapeHtml(shown)}</option>`;
  if (f.type === 'boolean') return `${label}<select id="${id}" name="${name}">${option(true, 'Yes')}${option(false, 'No')}</select>`;
  if (f.enum) return `${label}<select id="${id}" name="${name}">${f.enum.map((v) => option(v, text(v))).join('')}</select>`;
  const type = f.type === 'number' ? 'number" step="any' : 'text';
  return `${label}<input id="${id}" name="${name}" type="${type}" value="${escapeHtml(text(f.default))}">`;
}

/** The page a reviewer's link opens: who decides, the approval and its form, and the decisions the link allows. */
export function reviewPage({ approval: a, reviewer, grant }: Review, action: string, pageValue: string) {
  const only = grant.decisions.length === 1 ? grant.decisions[0] : undefined;
  const title = `${only ? VERB[only] : 'Review'}: ${a.title}`;
  const fields =
    grant.decisions.includes('approve') && a.form?.length ? `<fieldset><legend>Form</legend>${a.form.map(input).join('')}</fieldset>` : '';
  const buttons = grant.decisions
    .map((d) => `<button type="submit" name="decision" value="${d}" class="${d}">${VERB[d]}</button>`)
    .join('');
  return htmlPage(
    200,
    title,
    `<p class="who">You are deciding as <strong>${escapeHtml(reviewer.email)}</strong>.</p>
<dl>${row('Step', a.title)}${a.description ? row('Details', a.description) : ''}${row('Workflow', a.workflowId)}${row('Run', a.executionId)}${quorumRow(a)}${
      a.expiresAt !== undefined ? row('Deadline', new Date(a.expiresAt).toISOString()) : ''
    }</dl>
<form method="post" action="${escapeHtml(action)}"><input type="hidden" name="${PAGE_FIELD}" value="${escapeHtml(pageValue)}">${fields}<label for="comment">Comment (optional)</label><textarea id="comment" name="comment" maxlength="2000" rows="3"></textarea>${buttons}</form>
<p class="note">Nothing has been recorded yet. The decision is made, as ${escapeHtml(reviewer.email)}, when you press a button.</p>`,
  );
}

/** After the POST: what was recorded, for whom. */
export function reviewedPage({ reviewer }: Review, a: Approval, decision: Decision) {
  const done = decision === 'approve' ? 'Approved' : 'Rejected';
  return htmlPage(
    200,
    done,
    `<dl>${row('Step', a.title)}${row('Run', a.executionId)}${row('Decision', done)}${row('Decided as', reviewer.email)}${quorumRow(a)}</dl><p class="note">Recorded.${
      a.status === 'PENDING' ? ` ${needed(a)} more approval${needed(a) === 1 ? '' : 's'} needed.` : ''
    } You can close this page.</p>`,
  );
}
