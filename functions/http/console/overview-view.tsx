import type { ConsoleSession } from '../../../shared/console/auth.ts';
import { duration, RunLink, Status, Table, Time } from '../../../shared/console/components.tsx';
import { page } from '../../../shared/console/render.tsx';
import { countByStatus, ShortTime, StatusChart, WorkflowName } from '../../../shared/console/runs-components.tsx';
import type { Approval, RunRow } from '../../../shared/domain/read-types.ts';
import { OVERVIEW_RUNS } from '../../../shared/domain/run-list.ts';

/** Rows each of the overview's lists shows (pending approvals, failed runs). */
export const SHOWN = 10;

export type Overview = {
  day: { since: number; rows: RunRow[]; more: boolean };
  failed: RunRow[];
  approvals: Approval[];
  moreApprovals: boolean;
  names: ReadonlyMap<string, string>;
  now: number;
};

const runsHref = (q: Record<string, string>) => `/console/runs?${new URLSearchParams(q)}`;
const cut = (s: string, n: number) => (s.length > n ? `${s.slice(0, n)}…` : s);

function LastDay({ day }: { day: Overview['day'] }) {
  const counts = countByStatus(day.rows);
  const from = new Date(day.since).toISOString();
  return (
    <section aria-labelledby="last-day">
      <h2 id="last-day">Runs in the last 24 hours</h2>
      {counts.length === 0 ? (
        <p>No runs in the last 24 hours.</p>
      ) : (
        <>
          {day.more ? (
            <p class="muted">
              Counted: the latest {OVERVIEW_RUNS} runs of the last 24 hours; there were more (the runs list has them all).
            </p>
          ) : null}
          <StatusChart counts={counts} label="Runs in the last 24 hours by status" />
          <div class="figures">
            <Table caption="Runs in the last 24 hours by status">
              <thead>
                <tr>
                  <th scope="col">Status</th>
                  <th scope="col">Runs</th>
                </tr>
              </thead>
              <tbody>
                {counts.map(([status, n]) => (
                  <tr key={status}>
                    <td>
                      <a href={runsHref({ status, from })}>
                        <Status value={status} />
                      </a>
                    </td>
                    <td>{n.toLocaleString('en')}</td>
                  </tr>
                ))}
              </tbody>
              <tfoot>
                <tr>
                  <th scope="row">All</th>
                  <td>
                    <a href={runsHref({ from })}>{day.rows.length.toLocaleString('en')}</a>
                  </td>
                </tr>
              </tfoot>
            </Table>
          </div>
        </>
      )}
      <p>
        <a href="/console/runs">All runs</a>
      </p>
    </section>
  );
}

function PendingForMe({ o }: { o: Overview }) {
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

function Failed({ o }: { o: Overview }) {
  return (
    <section aria-labelledby="failed-runs">
      <h2 id="failed-runs">Last failed runs</h2>
      {o.failed.length === 0 ? (
        <p>No run failed in the last 24 hours.</p>
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
        <a href={runsHref({ status: 'FAILED' })}>All failed runs</a>
      </p>
    </section>
  );
}

/** The overview: the last day's runs by status (a chart and the same figures in a table), what waits for me, what failed. */
export const overviewPage = (session: ConsoleSession, o: Overview) =>
  page(
    { title: 'Overview', session },
    <>
      <LastDay day={o.day} />
      <PendingForMe o={o} />
      <Failed o={o} />
    </>,
  );
