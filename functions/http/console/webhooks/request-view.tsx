import { randomUUID } from 'node:crypto';
import type { ConsoleSession } from '../../../../shared/console/auth.ts';
import { RunLink, Table, Time } from '../../../../shared/console/components.tsx';
import { Csrf, page } from '../../../../shared/console/render.tsx';
import { type inboundLogRequest, REPLAYABLE_CODES } from '../../../../shared/domain/inbound-log.ts';
import { bodySize, Outcome } from './requests-view.tsx';

// One request of a webhook's inbound log: what was recorded of it (headers masked as the domain masks
// them, the body as text), and "Replay" when it may be replayed. All of it is the sender's text, escaped by JSX.

type Shown = Awaited<ReturnType<typeof inboundLogRequest>>;

function Headers({ headers }: { headers: Record<string, string> }) {
  const rows = Object.entries(headers);
  if (rows.length === 0)
    return <p class="muted">None kept: an accepted request keeps its headers only when its workflow reads them ($trigger).</p>;
  return (
    <>
      <p class="muted">Credentials, signatures and cookies are masked (***) when the request is recorded; the query string is not kept.</p>
      <Table caption="Headers as recorded">
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Value</th>
          </tr>
        </thead>
        <tbody>
          {rows.map(([name, value]) => (
            <tr key={name}>
              <td>
                <code>{name}</code>
              </td>
              <td class="header-value">{value}</td>
            </tr>
          ))}
        </tbody>
      </Table>
    </>
  );
}

/** Why a request cannot be replayed (the domain's rule: docs/webhooks.md "Replaying a request"). */
const notReplayable = (r: Shown['request']) =>
  r.bodyTruncated
    ? 'It cannot be replayed: only the start of its body was kept.'
    : `It cannot be replayed: only accepted requests, and refusals after the credential check (${REPLAYABLE_CODES.join(', ')}) whose body is a JSON object, may be.`;

function Replay({ session, shown }: { session: ConsoleSession; shown: Shown }) {
  const { webhook: w, request: r } = shown;
  return (
    <section aria-labelledby="replay">
      <h2 id="replay">Replay</h2>
      {r.replayable ? (
        <form method="post" action={`/console/webhooks/${w.webhookId}/requests/${r.requestId}/replay`}>
          <p>
            Starts a new run of the webhook’s workflow as it is now, from this body and the webhook’s current variable mapping, as its
            trigger would. The webhook’s current checks apply (enabled, source IP allowlist, the account’s rate limit), but not the sender’s
            credential. The audit log records that you replayed it.
          </p>
          <Csrf session={session} />
          {/* One run per confirmation: the form sent twice (a reload) answers the same run. */}
          <input type="hidden" name="replayKey" value={randomUUID()} />
          <div class="actions">
            <button type="submit">Replay</button>
          </div>
        </form>
      ) : (
        <p class="muted">{notReplayable(r)}</p>
      )}
    </section>
  );
}

/** The request's page; after a refused replay, the same page with why (`refusal`) and the refusal's status. */
export function requestPage(session: ConsoleSession, shown: Shown, opts: { refusal?: string; status?: number } = {}) {
  const { webhook: w, request: r } = shown;
  return page(
    { title: `Request ${r.requestId}`, session, section: '/console/webhooks', status: opts.status ?? 200 },
    <>
      <p>
        <a href={`/console/webhooks/${w.webhookId}/requests`}>Requests to {w.name}</a>
      </p>
      {opts.refusal ? (
        <p class="notice error" role="alert" id="replay-refusal">
          Not replayed: {opts.refusal}
        </p>
      ) : null}
      <dl class="workflow-facts">
        <dt>Received</dt>
        <dd>
          <Time ms={r.at} />
        </dd>
        <dt>Outcome</dt>
        <dd>
          <Outcome r={r} />
        </dd>
        <dt>Status</dt>
        <dd>{r.status}</dd>
        <dt>Method</dt>
        <dd>{r.method}</dd>
        <dt>Source IP</dt>
        <dd>{r.ip ? <code>{r.ip}</code> : <span class="muted">unknown</span>}</dd>
        <dt>Run</dt>
        <dd>{'executionId' in r && r.executionId ? <RunLink id={r.executionId} /> : <span class="muted">none: it was refused</span>}</dd>
        <dt>Size</dt>
        <dd>{bodySize(r)}</dd>
      </dl>
      <section aria-labelledby="headers">
        <h2 id="headers">Headers</h2>
        <Headers headers={r.headers} />
      </section>
      <section aria-labelledby="body">
        <h2 id="body">Body</h2>
        {r.body === '' ? (
          <p class="muted">Empty.</p>
        ) : (
          <pre class="value" tabindex={0}>
            {r.body}
          </pre>
        )}
        {r.bodyTruncated ? <p class="muted">Only the first 16 KiB of the body was kept.</p> : null}
      </section>
      <Replay session={session} shown={shown} />
    </>,
  );
}
