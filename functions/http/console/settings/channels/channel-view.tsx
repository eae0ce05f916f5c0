import type { ConsoleSession } from '../../../../../shared/console/auth.ts';
import { Csrf, page } from '../../../../../shared/console/render.tsx';
import { DELIVERY_COLUMNS, DeliveriesTable, type Delivery } from '../../../../../shared/console/deliveries-table.tsx';
import { type ChannelDraft, ChannelFields, kindName, settingsOf } from './form-view.tsx';
import type { ChannelView } from './list-view.tsx';
import { type FormErrors, FormAlert, noErrors } from '../../parts/labelled-field.tsx';

// A channel's page: its settings (write-only ones masked), the edit form (admins), "Send test" with
// the provider's answer, its recent deliveries with "Redeliver", and "Delete".

export type TestResult = { ok: boolean; status: number | null; error: string | null; retryAfterSeconds: number | null };

export const draftFromView = (c: ChannelView): ChannelDraft => ({
  type: c.type,
  name: c.name,
  ...Object.fromEntries(settingsOf(c.type).map((f) => [f, c[f] ?? ''])),
});

function Deliveries({ session, c, deliveries }: { session: ConsoleSession; c: ChannelView; deliveries: Delivery[] }) {
  const col = DELIVERY_COLUMNS;
  // The channel's name is the target's prefix (`slack:#ops`): the column shows the rest.
  const to = { header: 'To', cell: (d: Delivery) => d.target.slice(c.name.length + 2) };
  return (
    <section aria-labelledby="deliveries">
      <h2 id="deliveries">Recent deliveries</h2>
      {deliveries.length === 0 ? (
        <p class="muted">No messages sent on this channel by the account's recent runs.</p>
      ) : (
        <DeliveriesTable
          caption={`Recent deliveries on ${c.name}, newest first`}
          items={deliveries}
          columns={[col.sent, to, col.kind, col.stateAndError, col.attemptCount, col.run]}
          session={session}
          redeliverPath={(d) => `/console/channels/${c.id}/deliveries/${d.deliveryId}/redeliver`}
        />
      )}
    </section>
  );
}

function TestForm({ session, c, result, to }: { session: ConsoleSession; c: ChannelView; result?: TestResult; to: string }) {
  return (
    <section aria-labelledby="test">
      <h2 id="test">Send test</h2>
      {result ? (
        <p role="status" class={result.ok ? 'notice' : 'notice error'}>
          {result.ok ? 'Test message sent' : 'The test failed'}
          {result.status !== null ? ` (HTTP ${result.status})` : ''}
          {result.error ? `: ${result.error}` : '.'}
        </p>
      ) : null}
      <form method="post" action={`/console/channels/${c.id}/test`}>
        <Csrf session={session} />
        <div class="field">
          <label for="to">Send to (optional)</label>
          <input type="text" id="to" name="to" maxLength={254} value={to} autocomplete="off" aria-describedby="to-hint" />
          <small id="to-hint" class="muted hint">
            A conversation (#name) or an address; empty: the channel's default, or your own address.
          </small>
        </div>
        <button type="submit" class="secondary">
          Send test
        </button>
      </form>
    </section>
  );
}

export function channelPage(
  session: ConsoleSession,
  c: ChannelView,
  opts: { deliveries: Delivery[]; draft?: ChannelDraft; errors?: FormErrors; result?: TestResult; to?: string; status?: number },
) {
  const admin = session.principal.role === 'admin';
  const errors = opts.errors ?? noErrors;
  return page(
    { title: `${kindName(c.type)} channel ${c.name}`, session, section: '/console/channels', status: opts.status ?? 200 },
    <>
      <p>
        <a href="/console/channels">All channels</a>
        {c.interactionsUrl ? (
          <>
            {' · '}Slack interactivity Request URL: <code>{c.interactionsUrl}</code>
          </>
        ) : null}
      </p>
      {admin ? (
        <section aria-labelledby="settings">
          <h2 id="settings">Settings</h2>
          <form method="post" action={`/console/channels/${c.id}/edit`}>
            <FormAlert errors={errors} what="The channel was not changed." />
            <Csrf session={session} />
            <ChannelFields draft={opts.draft ?? draftFromView(c)} errors={errors} />
            <div class="actions">
              <button type="submit">Save</button>
              <a href={`/console/channels/${c.id}/delete`}>Delete</a>
            </div>
          </form>
        </section>
      ) : null}
      {admin ? <TestForm session={session} c={c} result={opts.result} to={opts.to ?? ''} /> : null}
      <Deliveries session={session} c={c} deliveries={opts.deliveries} />
    </>,
  );
}
