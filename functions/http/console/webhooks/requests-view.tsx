import type { ConsoleSession } from '../../../../shared/console/auth.ts';
import { NextPage, RunLink, Table, Time } from '../../../../shared/console/components.tsx';
import { page } from '../../../../shared/console/render.tsx';
import type { inboundLogPage, inboundLogRequest } from '../../../../shared/domain/inbound-log.ts';
import { refusalReason } from './refusals.ts';

// A webhook's inbound log in the console (docs/webhooks.md "Why was my request refused?"): the list of its
// recent requests. Every value of a request is the sender's text: rendered by JSX, escaped by construction.

export type LogPage = Awaited<ReturnType<typeof inboundLogPage>>;
export type LogRequest = Awaited<ReturnType<typeof inboundLogRequest>>['request'];

/** A body's size in bytes, as a person reads it; a cut body is "more than" what was kept. */
export function bodySize(r: Pick<LogRequest, 'body' | 'bodyTruncated'>): string {
  const bytes = Buffer.byteLength(r.body);
  const text =
    bytes < 1024 ? `${bytes} B` : bytes < 1024 * 1024 ? `${(bytes / 1024).toFixed(1)} KiB` : `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
  return r.bodyTruncated ? `more than ${text}` : text;
}

/** Accepted, or refused with its code and why (the code's sentence). */
export const Outcome = ({ r }: { r: Pick<LogRequest, 'code'> }) =>
  r.code === null ? (
    <span class="status status-SUCCEEDED">accepted</span>
  ) : (
    <>
      <span class="status status-refused">refused</span> <code>{r.code}</code>
      <br />
      <span class="refusal-reason">{refusalReason(r.code)}</span>
    </>
  );

export const requestHref = (webhookId: string, requestId: string) => `/console/webhooks/${webhookId}/requests/${requestId}`;

/** The refusals counted by code over the log's life (recorded or not). */
function RefusedCounts({ refused }: { refused: Record<string, number> }) {
  const counts = Object.entries(refused).filter(([, n]) => n > 0);
  if (counts.length === 0) return <p class="muted">No request of this webhook has been refused.</p>;
  return (
    <p>
      Refused since the webhook was created:{' '}
      {counts.map(([code, n], i) => (
        <span key={code}>
          {i ? ', ' : ''}
          <code>{code}</code> {n.toLocaleString('en')}
        </span>
      ))}
      .
    </p>
  );
}

export function requestsPage(session: ConsoleSession, log: LogPage, query: { limit?: number; cursor?: string | undefined }) {
  const { webhook: w } = log;
  const base = `/console/webhooks/${w.webhookId}`;
  return page(
    { title: `Requests to ${w.name}`, session, section: '/console/webhooks' },
    <>
      <p>
        <a href={base}>Back to the webhook</a>
      </p>
      <p>
        The requests this webhook’s trigger URL received, newest first: accepted ones are their runs (as long as the runs are kept), and the
        last 50 refused ones are kept for 7 days, each with why it was refused. Open one to see its headers and body, or to replay it.
      </p>
      <RefusedCounts refused={log.refused} />
      {log.items.length === 0 ? (
        <p class="muted">No requests{query.cursor ? ' on this page' : ' yet'}.</p>
      ) : (
        <Table caption="Requests this webhook received, newest first">
          <thead>
            <tr>
              <th scope="col">Received</th>
              <th scope="col">Outcome</th>
              <th scope="col">Status</th>
              <th scope="col">Run</th>
              <th scope="col">Size</th>
              <th scope="col">Source IP</th>
            </tr>
          </thead>
          <tbody>
            {log.items.map((r) => (
              <tr key={r.requestId}>
                <td>
                  <a href={requestHref(w.webhookId, r.requestId)}>
                    <Time ms={r.at} />
                  </a>
                </td>
                <td>
                  <Outcome r={r} />
                </td>
                <td>{r.status}</td>
                <td>{'executionId' in r && r.executionId ? <RunLink id={r.executionId} /> : <span class="muted">none</span>}</td>
                <td>{bodySize(r)}</td>
                <td>{r.ip ? <code>{r.ip}</code> : <span class="muted">unknown</span>}</td>
              </tr>
            ))}
          </tbody>
        </Table>
      )}
      <NextPage
        path={`${base}/requests`}
        query={{ limit: query.limit === undefined ? undefined : String(query.limit) }}
        cursor={log.nextCursor}
      />
    </>,
  );
}
