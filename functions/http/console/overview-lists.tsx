import { duration, RunLink, Table, Time } from '../../../shared/console/components.tsx';
import { ShortTime, WorkflowName } from '../../../shared/console/runs-components.tsx';
import type { Approval, RunRow } from '../../../shared/domain/read-types.ts';

// The overview's lists: what waits for the signed-in person, and the last failed runs.

/** Rows each of the overview's lists shows (pending approvals, failed runs). */
export const SHOWN = 10;

export type Lists = {
  failed: RunRow[];
  approvals: Approval[];
  moreApprovals: boolean;
  names: ReadonlyMap<string, string>;
  now: number;
};

export const runsHref = (q: Record<string, string>) => `/console/runs?${new URLSearchParams(q)}`;
const cut = (s: string, n: number) => (s.length > n ? `${s.slice(0, n)}…` : s);

export function PendingForMe({ o }: { o: Lists }) {
  return (
    <section aria-labelledby="pending-for-me">
      <h2 id="pending-for-me">Pending approvals for me</h2>
      {o.approvals.length === 0 ? (
        <p>No approval waits for you.</p>
      ) : (
        <Table caption="Pending approvals for me, oldest first">
          <thead>
            <tr>
              <th scope="col">Approval</th>
              <th scope="col">Workflow</th>
              <th scope="col">Waiting</th>
              <th scope="col">Deadline</th>
              <th scope="col">Approvals</th>
            </tr>
          </thead>
          <tbody>
            {o.approvals.map((a) => (
              <tr key={a.approvalId}>
                <td>
                  <a href={`/console/approvals/${a.approvalId}`}>{cut(a.title, 120)}</a>
                </td>
                <td>
                  <WorkflowName id={a.workflowId} names={o.names} />
                </td>
                <td class="nowrap">{duration(o.now - a.createdAt)}</td>
                <td class="nowrap">
                  <Time ms={a.expiresAt} />
                </td>
                <td>{`${a.approvals ?? 0} of ${a.minApprovals ?? 1}`}</td>
              </tr>
            ))}
          </tbody>
        </Table>
      )}
      <p>
        <a href="/console/approvals">{o.moreApprovals ? 'All pending approvals (there are more)' : 'All approvals'}</a>
      </p>
    </section>
  );
}

export function Failed({ o, since }: { o: Lists; since: string }) {
  return (
    <section aria-labelledby="failed-runs">
      <h2 id="failed-runs">Last failed runs</h2>
      {o.failed.length === 0 ? (
        <p>No run failed in these hours.</p>
      ) : (
        <Table caption="Last failed runs, newest first">
          <thead>
            <tr>
              <th scope="col">Run</th>
              <th scope="col">Workflow</th>
              <th scope="col">Error code</th>
              <th scope="col">Message</th>
              <th scope="col">Failed</th>
            </tr>
          </thead>
          <tbody>
            {o.failed.map((r) => (
              <tr key={r.executionId}>
                <td>
                  <RunLink id={r.executionId} />
                </td>
                <td>
                  <WorkflowName id={r.workflowId} names={o.names} />
                </td>
                <td>
                  <code>{r.error?.code ?? '—'}</code>
                </td>
                <td>{cut(r.error?.message ?? '', 200)}</td>
                <td>
                  <ShortTime ms={r.finishedAt ?? r.updatedAt} />
                </td>
              </tr>
            ))}
          </tbody>
        </Table>
      )}
      <p>
        <a href={runsHref({ status: 'FAILED', from: since })}>All failed runs of these hours</a>
      </p>
    </section>
  );
}
