import type { ConsoleSession } from '../../../../shared/console/auth.ts';
import { duration, Status, Table, Time } from '../../../../shared/console/components.tsx';
import { Csrf } from '../../../../shared/console/render.tsx';
import type { Artifact, Execution, RunEvent } from '../../../../shared/domain/read-types.ts';
import type { deliveryView } from '../../../../shared/domain/deliveries.ts';

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

type Delivery = ReturnType<typeof deliveryView>;

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

export function DeliveriesSection(props: {
  e: Execution;
  deliveries: { items: Delivery[]; nextCursor: string | null };
  session: ConsoleSession;
}) {
  const { e, deliveries, session } = props;
  const admin = session.principal.role === 'admin';
  return (
    <section aria-labelledby="deliveries">
      <h2 id="deliveries">Deliveries</h2>
      {deliveries.items.length === 0 ? (
        <p class="muted">No messages were sent for this run.</p>
      ) : (
        <Table caption="Messages sent for the run">
          <thead>
            <tr>
              <th scope="col">Kind</th>
              <th scope="col">Channel</th>
              <th scope="col">Target</th>
              <th scope="col">State</th>
              <th scope="col">Attempts</th>
              {admin ? <th scope="col">Action</th> : null}
            </tr>
          </thead>
          <tbody>
            {deliveries.items.map((d) => (
              <tr key={d.deliveryId}>
                <td>{d.kind}</td>
                <td>{d.channel}</td>
                <td class="event-data">{d.target}</td>
                <td>
                  <Status value={d.state} />
                  {d.nextRetryAt ? (
                    <span class="muted">
                      {' '}
                      next try <Time ms={d.nextRetryAt} />
                    </span>
                  ) : null}
                </td>
                <td>
                  <LastAttempt d={d} />
                </td>
                {admin ? (
                  <td>
                    {d.state === 'PENDING' ? (
                      <span class="muted">in progress</span>
                    ) : (
                      <form method="post" action={`/console/runs/${e.executionId}/deliveries/${d.deliveryId}/redeliver`}>
                        <Csrf session={session} />
                        <button type="submit" class="secondary outline" aria-label={`Redeliver ${d.kind} to ${d.target}`}>
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
