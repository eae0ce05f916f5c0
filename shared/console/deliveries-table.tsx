import type { ComponentChildren } from 'preact';
import type { deliveryView } from '../domain/deliveries.ts';
import type { ConsoleSession } from './auth.ts';
import { duration, RunLink, Status, Table, Time } from './components.tsx';
import { Csrf } from './render.tsx';

// The one table of deliveries (outgoing messages), on a run's page (what was sent for the run) and on
// a channel's page (what went out on it): a page names its columns from `DELIVERY_COLUMNS` (or one of
// its own), and an admin gets "Redeliver" on every delivery not being sent (a POST with the CSRF token
// to the page's redeliver path).

export type Delivery = ReturnType<typeof deliveryView>;
/** A column: its header, its cell of a delivery, and the cell's class. */
export type DeliveryColumn = { header: string; cell: (d: Delivery) => ComponentChildren; class?: string };

/** The last attempt, in words: how many, when, what the provider answered and how long it took. */
function LastAttempt({ d }: { d: Delivery }) {
  const last = d.attempts.at(-1);
  if (!last) return <span class="muted">none yet</span>;
  return (
    <>
      {d.attempts.length} · last <Time ms={last.at} />: {last.status !== undefined ? `HTTP ${last.status}` : (last.error ?? 'no answer')} in{' '}
      {duration(last.durationMs)}
    </>
  );
}

/** The columns the console's deliveries tables show. */
export const DELIVERY_COLUMNS = {
  sent: { header: 'Sent', cell: (d) => <Time ms={d.createdAt} /> },
  kind: { header: 'Kind', cell: (d) => d.kind },
  channel: { header: 'Channel', cell: (d) => d.channel },
  target: { header: 'Target', class: 'event-data', cell: (d) => d.target },
  /** Its state, and when it is tried next (a retry waiting). */
  stateAndNextTry: {
    header: 'State',
    cell: (d) => (
      <>
        <Status value={d.state} />
        {d.nextRetryAt ? (
          <span class="muted">
            {' '}
            next try <Time ms={d.nextRetryAt} />
          </span>
        ) : null}
      </>
    ),
  },
  /** Its state, and its last attempt's error. */
  stateAndError: {
    header: 'Status',
    cell: (d) => (
      <>
        <Status value={d.state} />
        {d.attempts.at(-1)?.error ? <div class="muted">{d.attempts.at(-1)?.error}</div> : null}
      </>
    ),
  },
  attemptCount: { header: 'Attempts', cell: (d) => d.attempts.length },
  lastAttempt: { header: 'Attempts', cell: (d) => <LastAttempt d={d} /> },
  run: { header: 'Run', cell: (d) => <RunLink id={d.executionId} /> },
} satisfies Record<string, DeliveryColumn>;

/** Deliveries as a table: the columns given, then (admins) "Redeliver" posting to `redeliverPath(d)`. */
export function DeliveriesTable(props: {
  caption: string;
  items: readonly Delivery[];
  columns: readonly DeliveryColumn[];
  session: ConsoleSession;
  redeliverPath: (d: Delivery) => string;
}) {
  const { session, columns } = props;
  const admin = session.principal.role === 'admin';
  return (
    <Table caption={props.caption}>
      <thead>
        <tr>
          {columns.map((c) => (
            <th key={c.header} scope="col">
              {c.header}
            </th>
          ))}
          {admin ? <th scope="col">Action</th> : null}
        </tr>
      </thead>
      <tbody>
        {props.items.map((d) => (
          <tr key={d.deliveryId}>
            {columns.map((c) => (
              <td key={c.header} class={c.class}>
                {c.cell(d)}
              </td>
            ))}
            {admin ? (
              <td>
                {d.state === 'PENDING' ? (
                  <span class="muted">sending</span>
                ) : (
                  <form method="post" action={props.redeliverPath(d)} class="inline">
                    <Csrf session={session} />
                    <button type="submit" class="secondary outline small" aria-label={`Redeliver ${d.kind} to ${d.target}`}>
                      Redeliver
                    </button>
                  </form>
                )}
              </td>
            ) : null}
          </tr>
        ))}
      </tbody>
    </Table>
  );
}
