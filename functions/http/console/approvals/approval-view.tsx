import type { ComponentChildren } from 'preact';
import type { ConsoleSession } from '../../../../shared/console/auth.ts';
import type { ApprovalPageData } from '../../../../shared/domain/approval-console.ts';
import { duration, JsonValue, RunLink, Status, Table, Time } from '../../../../shared/console/components.tsx';
import { page } from '../../../../shared/console/render.tsx';
import type { AuditRecord } from '../../../../shared/domain/read-types.ts';
import { type Attempt, DecisionForm, FormTable } from './approval-form.tsx';
import { compactInputs, Deadline, quorumText, reviewerNames, stillNeeded } from './approval-parts.tsx';

/** The run's inputs on one line; when they do not fit, all of them below it. */
function Inputs({ variables }: { variables: Record<string, unknown> | undefined }) {
  const line = compactInputs(variables);
  if (!line) return <span class="muted">none</span>;
  if (!line.endsWith('…')) return <code class="inputs">{line}</code>;
  return (
    <details>
      <summary>
        <code class="inputs">{line}</code>
      </summary>
      <JsonValue value={variables} label="All inputs" />
    </details>
  );
}

const who = (userId: string | undefined, people: ReadonlyMap<string, string>) => (userId ? (people.get(userId) ?? userId) : undefined);

/** The audit history: every decision and refused attempt, oldest first. */
function History({ history, people }: { history: AuditRecord[]; people: ReadonlyMap<string, string> }) {
  if (history.length === 0) return <p class="muted">No decisions or attempts yet.</p>;
  return (
    <Table caption="Decisions and refused attempts">
      <thead>
        <tr>
          <th scope="col">When</th>
          <th scope="col">Who</th>
          <th scope="col">Outcome</th>
          <th scope="col">Channel</th>
          <th scope="col">Comment</th>
        </tr>
      </thead>
      <tbody>
        {history.map((h) => (
          <tr key={h.auditId}>
            <td>
              <Time ms={h.at} />
            </td>
            <td>{who(h.userId, people) ?? (h.channel === 'timeout' ? 'the deadline' : '—')}</td>
            <td>
              {h.outcome === 'decided' ? (
                // A decision (or a quorum's vote): what this person decided, not yet the approval's status.
                <span class={`status status-${h.decision === 'reject' ? 'REJECTED' : 'APPROVED'}`}>
                  {h.decision === 'reject' ? 'rejected' : 'approved'}
                </span>
              ) : (
                <>
                  <span class="status status-refused">refused</span>{' '}
                  <span class="muted">
                    ({h.decision ? `${h.decision}, ` : ''}
                    {h.status} {h.code})
                  </span>
                </>
              )}
            </td>
            <td>{h.channel}</td>
            <td>{h.comment ?? <span class="muted">—</span>}</td>
          </tr>
        ))}
      </tbody>
    </Table>
  );
}

/** Where the approval stands for the signed-in member: the form, their vote, why they may not decide, or the outcome. */
function Decision({
  session,
  data,
  attempt,
  now,
}: {
  session: ConsoleSession;
  data: ApprovalPageData;
  attempt: Attempt | undefined;
  now: number;
}) {
  const { approval: a, reviewer, history, facts } = data;
  const userId = session.principal.userId;
  if (a.status !== 'PENDING') {
    const decided = [...history].reverse().find((h) => h.outcome === 'decided' && (a.decidedBy === undefined || h.userId === a.decidedBy));
    return (
      <section aria-labelledby="outcome">
        <h2 id="outcome">Outcome</h2>
        <p>
          <Status value={a.status} />
          {a.decision ? (
            <>
              {' '}
              by <strong>{who(a.decidedBy, facts.people) ?? 'unknown'}</strong>
            </>
          ) : null}
          {a.decidedAt !== undefined ? (
            <>
              {' '}
              at <Time ms={a.decidedAt} />
            </>
          ) : null}
          {decided ? ` via ${decided.channel}` : ''}.
        </p>
        {a.comment ? (
          <blockquote>
            {a.comment}
            <footer>
              <cite>{who(a.decidedBy, facts.people)}</cite>
            </footer>
          </blockquote>
        ) : null}
        <FormTable a={a} />
      </section>
    );
  }
  const expired = a.expiresAt !== undefined && a.expiresAt <= now;
  let standing: ComponentChildren;
  if (!reviewer)
    standing = (
      <p class="notice" id="read-only">
        <strong>Read only.</strong> You are not a reviewer of this approval, so you cannot decide it. Its reviewers:{' '}
        {reviewerNames(a.reviewers, facts.people).join(', ')}.
      </p>
    );
  else if (a.approvedBy?.includes(userId))
    standing = (
      <p class="notice">
        <strong>You approved this.</strong> It needs {stillNeeded(a)} more approval{stillNeeded(a) === 1 ? '' : 's'} ({quorumText(a)} so
        far).
      </p>
    );
  else if (expired)
    standing = (
      <p class="notice">
        <strong>Its deadline has passed.</strong> It can no longer be decided; it expires with the next sweep.
      </p>
    );
  const canDecide = !standing;
  return (
    <section aria-labelledby="decide">
      <h2 id="decide">{canDecide ? 'Decide' : 'Decision'}</h2>
      {standing}
      {canDecide ? <DecisionForm session={session} a={a} attempt={attempt} /> : <FormTable a={a} />}
    </section>
  );
}

/** The approval page: what it asks, for which run, its quorum and deadline, the form or the outcome, and its history. */
export function approvalPage(session: ConsoleSession, data: ApprovalPageData, now: number, attempt?: Attempt) {
  const { approval: a, facts, history } = data;
  const run = facts.runs.get(a.executionId);
  const quorum = (a.minApprovals ?? 1) > 1;
  return page(
    { title: a.title, session, section: '/console/approvals', status: attempt?.status ?? 200 },
    <div class="approval">
      {attempt ? (
        <p role="alert" class="notice error">
          {attempt.notice}
        </p>
      ) : null}
      <p>
        <Status value={a.status} /> <span class="muted">requested</span> <Time ms={a.createdAt} />{' '}
        <span class="muted">({duration(now - a.createdAt)} ago)</span>
      </p>
      {a.status === 'PENDING' && run?.status === 'INTERRUPTED' ? (
        <p class="notice" id="run-interrupted">
          {
            'Its run was interrupted (a restart while it waited): a decision made now is recorded, and the run takes it when it is resumed from '
          }
          <a href={`/console/runs/${a.executionId}`}>its page</a>.
        </p>
      ) : null}
      {a.description ? <p class="description">{a.description}</p> : null}
      <Table caption="Details">
        <tbody>
          <tr>
            <th scope="row">Run</th>
            <td>
              <RunLink id={a.executionId} /> {run ? <Status value={run.status} /> : null}
            </td>
          </tr>
          <tr>
            <th scope="row">Workflow</th>
            <td>
              <a href={`/console/workflows/${a.workflowId}`}>{facts.workflows.get(a.workflowId) ?? a.workflowId}</a>
            </td>
          </tr>
          <tr>
            <th scope="row">Step</th>
            <td>
              <code>{a.stepId}</code>
              {a.loop ? ` (iteration ${a.loop.index + 1} of ${a.loop.stepId})` : ''}
            </td>
          </tr>
          <tr>
            <th scope="row">Inputs</th>
            <td>
              <Inputs variables={run?.variables} />
            </td>
          </tr>
          <tr>
            <th scope="row">Reviewers</th>
            <td>{reviewerNames(a.reviewers, facts.people).join(', ')}</td>
          </tr>
          <tr>
            <th scope="row">Approvals</th>
            <td>
              {quorumText(a)}
              {quorum && a.status === 'PENDING' ? `; ${stillNeeded(a)} more needed` : ''}
            </td>
          </tr>
          <tr>
            <th scope="row">Deadline</th>
            <td>
              <Deadline ms={a.expiresAt} now={now} open={a.status === 'PENDING'} />
            </td>
          </tr>
        </tbody>
      </Table>
      {a.loop ? <JsonValue value={a.loop.item} label="The iteration's item" /> : null}
      <Decision session={session} data={data} attempt={attempt} now={now} />
      <section aria-labelledby="history">
        <h2 id="history">History</h2>
        <History history={history} people={facts.people} />
      </section>
      <p>
        <a href="/console/approvals">Back to the approvals</a>
      </p>
    </div>,
  );
}
