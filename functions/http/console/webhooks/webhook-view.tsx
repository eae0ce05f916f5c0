import type { ConsoleSession } from '../../../../shared/console/auth.ts';
import { RecentRunsTable, Time } from '../../../../shared/console/components.tsx';
import { Csrf, page } from '../../../../shared/console/render.tsx';
import type { executionView } from '../../../../shared/domain/executions.ts';
import { TriggersChart, TriggersTable } from './chart.tsx';
import { curlExample, curlNeeds } from './curl.ts';
import type { WebhookShown } from './data.ts';
import { AuthMode, Enabled } from './list-view.tsx';

type Stats = {
  total: number;
  rejected: Record<string, number>;
  lastTriggeredAt: number | null;
  daily: { date: string; accepted: number; rejected: number }[];
};
export type WebhookPageData = { w: WebhookShown; stats: Stats; runs: ReturnType<typeof executionView>[] };

/** A value with a "Copy" button (console.js copies the element's text; without script, select it). */
const Copyable = ({ id, label, text, pre }: { id: string; label: string; text: string; pre?: boolean }) => (
  <div class="copyable">
    {pre ? (
      <pre id={id} tabindex={0}>
        {text}
      </pre>
    ) : (
      <code id={id}>{text}</code>
    )}{' '}
    <button type="button" class="secondary outline copy" data-copy={`#${id}`} aria-label={`Copy ${label.toLowerCase()}`}>
      Copy
    </button>
  </div>
);

function Facts({ w }: { w: WebhookShown }) {
  const mapping = Object.entries(w.variableMapping ?? {});
  return (
    <dl class="workflow-facts">
      <dt>Workflow</dt>
      <dd>
        <a href={`/console/workflows/${w.workflowId}`}>{w.workflowName}</a>
      </dd>
      <dt>Authentication</dt>
      <dd>
        <AuthMode w={w} />
        {w.apiKeyId ? (
          <>
            {' '}
            (key <code>{w.apiKeyId}</code>)
          </>
        ) : null}
      </dd>
      <dt>Status</dt>
      <dd>
        <Enabled enabled={w.enabled} />
      </dd>
      <dt>Variable mapping</dt>
      <dd>
        {mapping.length ? (
          mapping.map(([variable, field]) => (
            <div key={variable}>
              <code>{variable}</code> ← <code>{field}</code>
            </div>
          ))
        ) : (
          <span class="muted">none: the body’s top-level fields, by name</span>
        )}
      </dd>
      <dt>Source IP allowlist</dt>
      <dd>
        {w.allowedSourceIps.length ? (
          w.allowedSourceIps.map((ip) => <code key={ip}>{`${ip} `}</code>)
        ) : (
          <span class="muted">any address</span>
        )}
      </dd>
      <dt>Created</dt>
      <dd>
        <Time ms={w.createdAt} />
      </dd>
      <dt>Updated</dt>
      <dd>
        <Time ms={w.updatedAt} />
      </dd>
    </dl>
  );
}

function Actions({ session, w }: { session: ConsoleSession; w: WebhookShown }) {
  const base = `/console/webhooks/${w.id}`;
  return (
    <div class="actions">
      <a href={`${base}/edit`} class="action-link">
        Edit
      </a>
      <form method="post" action={`${base}/${w.enabled ? 'disable' : 'enable'}`}>
        <Csrf session={session} />
        <button type="submit" class="secondary">
          {w.enabled ? 'Disable' : 'Enable'}
        </button>
      </form>
      <a href={`${base}/delete`} class="action-link">
        Delete
      </a>
    </div>
  );
}

/**
 * A webhook's page. Right after its creation (`secret`), the same page carries the secret, shown this
 * once: the response is the create POST's own (`no-store`, as every console page), never a URL of its own.
 */
export function webhookPage(
  session: ConsoleSession,
  { w, stats, runs }: WebhookPageData,
  opts: { triggerUrl: string; secret?: string | undefined; created?: boolean; status?: number },
) {
  const needs = curlNeeds(w);
  return page(
    { title: w.name, session, section: '/console/webhooks', status: opts.status ?? 200 },
    <>
      {opts.created ? (
        <p class="notice" role="status">
          Webhook created.
        </p>
      ) : null}
      {opts.secret ? (
        <section aria-labelledby="secret" class="notice">
          <h2 id="secret">Its secret</h2>
          <p>
            <strong>This secret is shown only once.</strong> Keep it where the sender keeps its secrets; the console never shows it again (a
            new one can be set with Edit).
          </p>
          <Copyable id="webhook-secret" label="Secret" text={opts.secret} />
        </section>
      ) : null}
      <Facts w={w} />
      <Actions session={session} w={w} />
      <section aria-labelledby="trigger">
        <h2 id="trigger">Trigger URL</h2>
        <Copyable id="trigger-url" label="Trigger URL" text={opts.triggerUrl} />
        {w.open ? <p class="notice">Anyone who has this URL can start runs: the webhook is open.</p> : null}
        <h3>Try it with curl</h3>
        {needs ? (
          <p>
            Set <code>{needs.split(':')[0]}</code> first:{needs.slice(needs.indexOf(':') + 1)}.
          </p>
        ) : null}
        <Copyable id="curl-example" label="curl example" text={curlExample(w, opts.triggerUrl)} pre />
      </section>
      <section aria-labelledby="stats">
        <h2 id="stats">Triggers</h2>
        <p>Last trigger: {stats.lastTriggeredAt === null ? <span class="muted">never</span> : <Time ms={stats.lastTriggeredAt} />}</p>
        <TriggersChart days={stats.daily} />
        <TriggersTable days={stats.daily} total={stats.total} rejected={stats.rejected} />
      </section>
      <section aria-labelledby="requests">
        <h2 id="requests">Requests</h2>
        <p>
          Each request the trigger URL received, accepted or refused with why, its headers and body, and a replay:{' '}
          <a href={`/console/webhooks/${w.id}/requests`}>Requests to this webhook</a>
        </p>
      </section>
      <section aria-labelledby="runs">
        <h2 id="runs">Recent runs</h2>
        {runs.length === 0 ? (
          <p class="muted">No runs started by this webhook yet.</p>
        ) : (
          <RecentRunsTable caption="Recent runs of this webhook, newest first" runs={runs} />
        )}
      </section>
    </>,
  );
}

/** The confirmation of a deletion: it names the webhook; its button POSTs. */
export const deleteConfirmPage = (session: ConsoleSession, w: WebhookShown) =>
  page(
    { title: `Delete webhook '${w.name}'?`, session, section: '/console/webhooks' },
    <>
      <p>
        Its trigger URL stops working at once (calls to it answer 404), and it no longer counts against the plan. Runs it started stay. This
        cannot be undone.
      </p>
      <form method="post" action={`/console/webhooks/${w.id}/delete`}>
        <Csrf session={session} />
        <div class="actions">
          <button type="submit">Delete webhook</button>
          <a href={`/console/webhooks/${w.id}`}>Keep it</a>
        </div>
      </form>
    </>,
  );

/** A second send of the create form (a reload of its result page): nothing more was created, and the secret is not shown again. */
export const alreadySentPage = (session: ConsoleSession) =>
  page(
    { title: 'This form was sent already', session, section: '/console/webhooks', status: 409 },
    <>
      <p>The webhook was created the first time this form was sent; sending it again creates nothing. Its secret is not shown again.</p>
      <p>
        <a href="/console/webhooks">Webhooks</a>
      </p>
    </>,
  );
