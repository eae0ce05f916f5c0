import type { ConsoleSession } from '../../../../shared/console/auth.ts';
import { Table, Time } from '../../../../shared/console/components.tsx';
import type { Artifact, Execution, RunEvent } from '../../../../shared/domain/read-types.ts';
import { DELIVERY_COLUMNS, DeliveriesTable, type Delivery } from '../../../../shared/console/deliveries-table.tsx';

// The run's log (its events, a page at a time), its artifacts (downloads) and its deliveries
// (every outgoing message, "Redeliver" for admins).

/** An event's data on one line, cut: the whole event is one API call away (`GET /api/v1/executions/{id}/events`). */
const EVENT_DATA_CHARS = 240;
const oneLine = (data: Record<string, unknown>) => {
  const { stepId: _s, ...rest } = data;
  const text = Object.keys(rest).length ? JSON.stringify(rest) : '';
  return text.length > EVENT_DATA_CHARS ? `${text.slice(0, EVENT_DATA_CHARS)}…` : text;
};

export function EventsSection({ e, events }: { e: Execution; events: { items: RunEvent[]; nextCursor: string | null } }) {
  return (
    <section aria-labelledby="events">
      <h2 id="events">Events</h2>
      {events.items.length === 0 ? (
        <p class="muted">No more events.</p>
      ) : (
        <Table caption="The run's events, oldest first">
          <thead>
            <tr>
              <th scope="col">Seq</th>
              <th scope="col">Time (UTC)</th>
              <th scope="col">Event</th>
              <th scope="col">Step</th>
              <th scope="col">Data</th>
            </tr>
          </thead>
          <tbody>
            {events.items.map((ev) => (
              <tr key={ev.eventId}>
                <td>{ev.seq ?? ''}</td>
                <td>
                  <time datetime={new Date(ev.at).toISOString()}>{new Date(ev.at).toISOString().slice(11, 23)}</time>
                </td>
                <td>
                  <code>{ev.type}</code>
                </td>
                <td>{typeof ev.data.stepId === 'string' ? ev.data.stepId : ''}</td>
                <td class="event-data">{oneLine(ev.data) ? <code>{oneLine(ev.data)}</code> : null}</td>
              </tr>
            ))}
          </tbody>
        </Table>
      )}
      {events.nextCursor ? (
        <p>
          <a href={`/console/runs/${e.executionId}?${new URLSearchParams({ cursor: events.nextCursor })}#events`}>Next page</a>
        </p>
      ) : null}
    </section>
  );
}

const size = (bytes: number) =>
  bytes < 1024 ? `${bytes} B` : bytes < 1024 * 1024 ? `${(bytes / 1024).toFixed(1)} KiB` : `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

export function ArtifactsSection({ e, artifacts }: { e: Execution; artifacts: Artifact[] }) {
  return (
    <section aria-labelledby="artifacts">
      <h2 id="artifacts">Artifacts</h2>
      {artifacts.length === 0 ? (
        <p class="muted">None.</p>
      ) : (
        <Table caption="The run's artifacts">
          <thead>
            <tr>
              <th scope="col">Download</th>
              <th scope="col">Step</th>
              <th scope="col">Type</th>
              <th scope="col">Size</th>
              <th scope="col">Created</th>
            </tr>
          </thead>
          <tbody>
            {artifacts.map((a) => (
              <tr key={a.artifactId}>
                <td>
                  <a href={`/console/runs/${e.executionId}/artifacts/${a.artifactId}`}>{a.name}</a>
                </td>
                <td>{a.stepId}</td>
                <td>{a.contentType}</td>
                <td>{size(a.size)}</td>
                <td>
                  <Time ms={a.createdAt} />
                </td>
              </tr>
            ))}
          </tbody>
        </Table>
      )}
    </section>
  );
}

export function DeliveriesSection(props: {
  e: Execution;
  deliveries: { items: Delivery[]; nextCursor: string | null };
  session: ConsoleSession;
}) {
  const { e, deliveries, session } = props;
  const c = DELIVERY_COLUMNS;
  return (
    <section aria-labelledby="deliveries">
      <h2 id="deliveries">Deliveries</h2>
      {deliveries.items.length === 0 ? (
        <p class="muted">No messages were sent for this run.</p>
      ) : (
        <DeliveriesTable
          caption="Messages sent for the run"
          items={deliveries.items}
          columns={[c.kind, c.channel, c.target, c.stateAndNextTry, c.lastAttempt]}
          session={session}
          redeliverPath={(d) => `/console/runs/${e.executionId}/deliveries/${d.deliveryId}/redeliver`}
        />
      )}
      {deliveries.nextCursor ? (
        <p>
          <a href={`/console/runs/${e.executionId}?${new URLSearchParams({ deliveriesCursor: deliveries.nextCursor })}#deliveries`}>
            More deliveries
          </a>
        </p>
      ) : null}
    </section>
  );
}
