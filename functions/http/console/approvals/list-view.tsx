import type { ConsoleSession } from '../../../../shared/console/auth.ts';
import type { Facts } from '../../../../shared/domain/approval-console.ts';
import type { InboxRow, InboxSort } from '../../../../shared/domain/approval-inbox.ts';
import { duration, NextPage, RunLink, Table } from '../../../../shared/console/components.tsx';
import { Csrf, type NavWaiting, page } from '../../../../shared/console/render.tsx';
import { PENDING_LOOKED_AT } from '../../../../shared/domain/pending-for-me.ts';
import type { BULK_OUTCOMES } from '../../../../shared/schemas/approvals.ts';
import { compactInputs, Deadline, quorumText } from './approval-parts.tsx';

/** What a bulk decision did, counted by outcome (the redirect's query). */
export type Summary = Record<(typeof BULK_OUTCOMES)[number], number>;
type Inbox = {
  items: InboxRow[];
  nextCursor: string | null;
  /** Other pending approvals exist beyond those read (the deadline order sorts the oldest `PENDING_LOOKED_AT`). */
  more: boolean;
  all: boolean;
  sort: InboxSort;
  facts: Facts;
  now: number;
  waiting: NavWaiting | undefined;
  summary: Summary | undefined;
};

/** The inbox's address for a scope and an order (the default order is left out of it). */
const inboxHref = (all: boolean, sort: InboxSort) => {
  const q = new URLSearchParams();
  if (all) q.set('all', '1');
  if (sort !== 'oldest') q.set('sort', sort);
  const s = q.toString();
  return s ? `/console/approvals?${s}` : '/console/approvals';
};

const ORDER_TEXT: Record<InboxSort, string> = { oldest: 'oldest first', deadline: 'deadline soonest first, those without one last' };

/** Admins choose between what waits for them and every pending approval; members see only theirs. */
function Scope({ session, all, sort }: { session: ConsoleSession; all: boolean; sort: InboxSort }) {
  if (session.principal.role !== 'admin') return <p class="muted">{`Pending approvals where you are a reviewer, ${ORDER_TEXT[sort]}.`}</p>;
  return (
    <nav aria-label="Which approvals" class="scope">
      <ul>
        <li>
          <a href={inboxHref(false, sort)} aria-current={all ? undefined : 'page'}>
            Where I am a reviewer
          </a>
        </li>
        <li>
          <a href={inboxHref(true, sort)} aria-current={all ? 'page' : undefined}>
            All pending
          </a>
        </li>
      </ul>
    </nav>
  );
}

/** The order: kept in the address, so Back and reload keep it. */
function SortChoice({ all, sort }: { all: boolean; sort: InboxSort }) {
  const choices: [InboxSort, string][] = [
    ['oldest', 'Oldest first'],
    ['deadline', 'Deadline soonest'],
  ];
  return (
    <nav aria-label="Sort" class="scope sort-choice">
      <ul>
        <li>
          <span class="muted">Sort:</span>
        </li>
        {choices.map(([s, text]) => (
          <li key={s}>
            <a href={inboxHref(all, s)} aria-current={s === sort ? 'page' : undefined}>
              {text}
            </a>
          </li>
        ))}
      </ul>
    </nav>
  );
}

const plural = (n: number, one: string, many: string) => (n === 1 ? one : many);
const OUTCOME_TEXT: Record<keyof Summary, (n: number) => string> = {
  approved: (n) => `${n} approved`,
  voted: (n) => `${n} ${plural(n, 'approval counted; its quorum needs more', 'approvals counted; their quorums need more')}`,
  rejected: (n) => `${n} rejected`,
  handled: (n) => `${n} already decided: nothing changed for ${plural(n, 'it', 'them')}`,
  refused: (n) => `${n} not yours to decide: nothing recorded`,
  needsform: (n) => `${n} ${plural(n, 'needs its form: open it', 'need their forms: open each')} to approve`,
  failed: (n) => `${n} could not be decided: try again`,
};

/** What the last bulk decision did, in words: "2 approved, 1 already decided: nothing changed for it." */
export function summaryText(s: Summary): string {
  const parts = (Object.keys(OUTCOME_TEXT) as (keyof Summary)[]).filter((o) => s[o] > 0).map((o) => OUTCOME_TEXT[o](s[o]));
  return parts.length ? `${parts.join(', ')}.` : 'Nothing was selected: nothing was decided.';
}

/** A row's own Approve and Reject (the title for screen readers), or why there are none. */
function Decide({ a }: { a: InboxRow }) {
  if (!a.mine) return <span class="muted">not a reviewer</span>;
  if (a.voted) return <span class="muted">you approved</span>;
  return (
    <div class="inbox-decide">
      {a.needsForm ? (
        <a href={`/console/approvals/${a.approvalId}`}>
          Needs its form: open it<span class="visually-hidden">{` (${a.title})`}</span>
        </a>
      ) : (
        <button type="submit" name="approve" value={a.approvalId} class="small">
          Approve<span class="visually-hidden">{` ${a.title}`}</span>
        </button>
      )}
      <button type="submit" name="reject" value={a.approvalId} class="small secondary outline">
        Reject<span class="visually-hidden">{` ${a.title}`}</span>
      </button>
    </div>
  );
}

function Rows({ items, facts, now }: Pick<Inbox, 'items' | 'facts' | 'now'>) {
  return (
    <>
      {items.map((a) => {
        const run = facts.runs.get(a.executionId);
        const inputs = compactInputs(run?.variables);
        const selectable = a.mine && !a.voted;
        return (
          <tr key={a.approvalId}>
            <td>
              {selectable ? (
                <>
                  <input type="checkbox" name="approvalId" value={a.approvalId} id={`select-${a.approvalId}`} />
                  <label for={`select-${a.approvalId}`} class="visually-hidden">{`Select ${a.title}`}</label>
                </>
              ) : null}
            </td>
            <td>
              <a href={`/console/approvals/${a.approvalId}`}>{a.title}</a>
            </td>
            <td>
              <Decide a={a} />
            </td>
            <td>
              <RunLink id={a.executionId} />
              {run?.status === 'INTERRUPTED' ? <span class="muted"> (run interrupted)</span> : null}
            </td>
            <td>{facts.workflows.get(a.workflowId) ?? a.workflowId}</td>
            <td>{inputs ? <code class="inputs">{inputs}</code> : <span class="muted">none</span>}</td>
            <td>{duration(now - a.createdAt)}</td>
            <td>
              <Deadline ms={a.expiresAt} now={now} />
            </td>
            <td>{quorumText(a)}</td>
          </tr>
        );
      })}
    </>
  );
}

/**
 * The approvals inbox: each pending approval with its run, workflow, inputs, age, deadline and quorum
 * progress, and its own Approve and Reject; ticked ones are decided together ("Approve selected",
 * "Reject selected"). One form, posted without script; a decision comes back here with its summary.
 */
export const approvalsPage = (session: ConsoleSession, inbox: Inbox) => {
  const { items, nextCursor, more, all, sort, facts, now, waiting, summary } = inbox;
  const formNeeded = items.some((a) => a.mine && !a.voted && a.needsForm);
  return page(
    { title: 'Approvals', session, section: '/console/approvals', waiting },
    <>
      <Scope session={session} all={all} sort={sort} />
      <SortChoice all={all} sort={sort} />
      {summary ? (
        <p class={summary.failed > 0 ? 'notice error' : 'notice'} role="status">
          {summaryText(summary)}
        </p>
      ) : null}
      {items.length === 0 ? (
        <p>{all ? 'No approvals are pending.' : 'Nothing waits for your decision.'}</p>
      ) : (
        <form method="post" action="/console/approvals" class="inbox">
          {/* First in the form and disabled: Enter in the form submits nothing (never a row's Approve). */}
          <button type="submit" disabled hidden />
          <Csrf session={session} />
          {all ? <input type="hidden" name="all" value="1" /> : null}
          {sort !== 'oldest' ? <input type="hidden" name="sort" value={sort} /> : null}
          <div class="bulk-actions">
            <button type="submit" name="decision" value="approve">
              Approve selected
            </button>
            <button type="submit" name="decision" value="reject" class="secondary">
              Reject selected
            </button>
          </div>
          {formNeeded ? (
            <p class="muted">
              An approval marked "Needs its form" asks for values its step requires: open it to approve it. "Approve selected" leaves it
              out; "Reject selected" rejects it, as a rejection needs no form.
            </p>
          ) : null}
          <Table caption={all ? 'All pending approvals' : 'Pending approvals where you are a reviewer'}>
            <thead>
              <tr>
                <th scope="col">Select</th>
                <th scope="col">Approval</th>
                <th scope="col">Decide</th>
                <th scope="col">Run</th>
                <th scope="col">Workflow</th>
                <th scope="col">Inputs</th>
                <th scope="col">Age</th>
                <th scope="col">Deadline</th>
                <th scope="col">Approvals</th>
              </tr>
            </thead>
            <tbody>
              <Rows items={items} facts={facts} now={now} />
            </tbody>
          </Table>
        </form>
      )}
      {sort === 'deadline' && more ? (
        <p class="muted">
          {`Sorted by deadline among the account's ${PENDING_LOOKED_AT} oldest pending approvals; more are pending: `}
          <a href={inboxHref(all, 'oldest')}>Oldest first</a> pages through every one.
        </p>
      ) : null}
      <NextPage path="/console/approvals" query={{ all: all ? '1' : undefined }} cursor={nextCursor} />
    </>,
  );
};
