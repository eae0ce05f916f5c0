import type { ConsoleSession } from '../../../../shared/console/auth.ts';
import type { Facts } from '../../../../shared/domain/approval-console.ts';
import { duration, NextPage, RunLink, Table } from '../../../../shared/console/components.tsx';
import { page } from '../../../../shared/console/render.tsx';
import type { approvalView } from '../../../../shared/domain/approval-reads.ts';
import { compactInputs, Deadline, quorumText } from './approval-parts.tsx';

type Row = ReturnType<typeof approvalView>;
type Inbox = { items: Row[]; nextCursor: string | null; all: boolean; facts: Facts; now: number };

/** Admins choose between what waits for them and every pending approval; members see only theirs. */
function Scope({ session, all }: { session: ConsoleSession; all: boolean }) {
  if (session.principal.role !== 'admin') return <p class="muted">Pending approvals where you are a reviewer, oldest first.</p>;
  return (
    <nav aria-label="Which approvals" class="scope">
      <ul>
        <li>
          <a href="/console/approvals" aria-current={all ? undefined : 'page'}>
            Where I am a reviewer
          </a>
        </li>
        <li>
          <a href="/console/approvals?all=1" aria-current={all ? 'page' : undefined}>
            All pending
          </a>
        </li>
      </ul>
    </nav>
  );
}

/** The approvals inbox: each pending approval with its run, workflow, inputs, age, deadline and quorum progress. */
export const approvalsPage = (session: ConsoleSession, { items, nextCursor, all, facts, now }: Inbox) =>
  page(
    { title: 'Approvals', session, section: '/console/approvals' },
    <>
      <Scope session={session} all={all} />
      {items.length === 0 ? (
        <p>{all ? 'No approvals are pending.' : 'Nothing waits for your decision.'}</p>
      ) : (
        <Table caption={all ? 'All pending approvals' : 'Pending approvals where you are a reviewer'}>
          <thead>
            <tr>
              <th scope="col">Approval</th>
              <th scope="col">Run</th>
              <th scope="col">Workflow</th>
              <th scope="col">Inputs</th>
              <th scope="col">Age</th>
              <th scope="col">Deadline</th>
              <th scope="col">Approvals</th>
            </tr>
          </thead>
          <tbody>
            {items.map((a) => {
              const inputs = compactInputs(facts.runs.get(a.executionId)?.variables);
              return (
                <tr key={a.approvalId}>
                  <td>
                    <a href={`/console/approvals/${a.approvalId}`}>{a.title}</a>
                  </td>
                  <td>
                    <RunLink id={a.executionId} />
                    {facts.runs.get(a.executionId)?.status === 'INTERRUPTED' ? <span class="muted"> (run interrupted)</span> : null}
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
          </tbody>
        </Table>
      )}
      <NextPage path="/console/approvals" query={{ all: all ? '1' : undefined }} cursor={nextCursor} />
    </>,
  );
