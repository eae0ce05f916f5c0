import type { ConsoleSession } from '../../../shared/console/auth.ts';
import { Status, Table } from '../../../shared/console/components.tsx';
import { type NavWaiting, page } from '../../../shared/console/render.tsx';
import type { RunOverview, Span } from '../../../shared/domain/run-overview.ts';
import { HoursChart, HoursTable, hourText } from './overview-chart.tsx';
import { Failed, type Lists, PendingForMe, runsHref } from './overview-lists.tsx';

export { SHOWN } from './overview-lists.tsx';

export type Overview = Lists & {
  runs: RunOverview;
  /** The account's pending approvals (all of them, or the first `pendingLooked` with `morePending`). */
  pending: number;
  morePending: boolean;
  /** Approvals waiting for me among those looked through: the navigation's count. */
  waiting: NavWaiting;
};

const SPAN_TEXT: Record<Span, string> = { '24h': 'the last 24 hours', '7d': 'the last 7 days' };
const n = (v: number) => v.toLocaleString('en');

function SpanSwitch({ span }: { span: Span }) {
  return (
    <nav aria-label="Time span" class="span-switch">
      <ul>
        {(['24h', '7d'] as const).map((s) => (
          <li key={s}>
            <a href={s === '24h' ? '/console' : `/console?span=${s}`} aria-current={s === span ? 'page' : undefined}>
              {s === '24h' ? 'Last 24 hours' : 'Last 7 days'}
            </a>
          </li>
        ))}
      </ul>
    </nav>
  );
}

function Counts({ runs, from }: { runs: RunOverview; from: string }) {
  const span = SPAN_TEXT[runs.span];
  return (
    <div class="figures">
      <Table caption={`Runs of ${span} by status`}>
        <thead>
          <tr>
            <th scope="col">Runs</th>
            <th scope="col">Count</th>
          </tr>
        </thead>
        <tbody>
          <tr>
            <th scope="row">
              <a href={runsHref({ from })}>Started</a>
            </th>
            <td>{n(runs.started)}</td>
          </tr>
          {runs.ends.map(([status, count]) => (
            <tr key={status}>
              <th scope="row">
                <a href={runsHref({ status, from })}>
                  <Status value={status} />
                </a>
              </th>
              <td>{n(count)}</td>
            </tr>
          ))}
        </tbody>
      </Table>
    </div>
  );
}

function Errors({ runs, from }: { runs: RunOverview; from: string }) {
  return (
    <section aria-labelledby="failures-by-code">
      <h2 id="failures-by-code">Failures by error code</h2>
      {runs.errors.length === 0 ? (
        <p>No run failed in {SPAN_TEXT[runs.span]}.</p>
      ) : (
        <div class="figures">
          <Table caption={`Failed runs of ${SPAN_TEXT[runs.span]} by error code, most first`}>
            <thead>
              <tr>
                <th scope="col">Error code</th>
                <th scope="col">Failed runs</th>
              </tr>
            </thead>
            <tbody>
              {runs.errors.map(([code, count]) => (
                <tr key={code}>
                  <th scope="row">
                    <a href={runsHref({ status: 'FAILED', from })}>
                      <code>{code}</code>
                    </a>
                  </th>
                  <td>{n(count)}</td>
                </tr>
              ))}
            </tbody>
          </Table>
        </div>
      )}
    </section>
  );
}

function Waiting({ o }: { o: Overview }) {
  return (
    <section aria-labelledby="waiting">
      <h2 id="waiting">Waiting now</h2>
      <ul>
        <li>
          <a href="/console/approvals">
            {o.morePending ? `More than ${n(o.pending)} pending approvals` : `Pending approvals: ${n(o.pending)}`}
          </a>
        </li>
        <li>
          <a href={runsHref({ status: 'WAITING_APPROVAL' })}>Runs waiting for an approval</a>
        </li>
        <li>
          <a href={runsHref({ status: 'WAITING_CALLBACK' })}>Runs waiting for a callback</a>
        </li>
      </ul>
    </section>
  );
}

/**
 * The overview: the runs of the span (24 hours, or 7 days) counted as they started and ended, by status
 * with links to the runs list, per hour as a chart, failures by error code; what waits; what failed last.
 */
export const overviewPage = (session: ConsoleSession, o: Overview) => {
  const { runs } = o;
  const from = new Date(runs.since).toISOString();
  const span = SPAN_TEXT[runs.span];
  return page(
    { title: 'Overview', session, waiting: o.waiting },
    <>
      <section aria-labelledby="runs-of-span">
        <h2 id="runs-of-span">{`Runs in ${span}`}</h2>
        <SpanSwitch span={runs.span} />
        <p class="muted">
          {`Counted as runs start and end, per hour from ${hourText(runs.since)}: every run, not a sample. A count may lag a run's end by a second or two.`}
        </p>
        <Counts runs={runs} from={from} />
        <HoursChart
          hours={runs.hours}
          label={`Runs ended per hour in ${span}: ${n(runs.ends.reduce((a, [, c]) => a + c, 0))} in all (the table below has the figures)`}
        />
        <HoursTable hours={runs.hours} />
        <p>
          <a href="/console/runs">All runs</a>
        </p>
      </section>
      <Errors runs={runs} from={from} />
      <Waiting o={o} />
      <PendingForMe o={o} />
      <Failed o={o} since={from} />
    </>,
  );
};
