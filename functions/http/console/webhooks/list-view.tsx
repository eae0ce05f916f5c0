import type { ConsoleSession } from '../../../../shared/console/auth.ts';
import { Table, Time } from '../../../../shared/console/components.tsx';
import { page } from '../../../../shared/console/render.tsx';
import type { webhookView } from '../../../../shared/domain/webhooks.ts';

export type ListedWebhook = ReturnType<typeof webhookView> & { workflowName: string; lastTriggeredAt: number | null };

const MODE_NAMES: Record<string, string> = { api_key: 'API key', hmac: 'Shared secret (HMAC)', open: 'Open' };
const SENDER_NAMES: Record<string, string> = {
  github: 'GitHub',
  stripe: 'Stripe',
  slack: 'Slack',
  'standard-webhooks': 'Standard Webhooks',
};

/** How a webhook's callers authenticate, in words; an open webhook carries an "Open" badge (text, not colour alone). */
export function AuthMode({ w }: { w: Pick<ListedWebhook, 'authMode' | 'signatureScheme'> }) {
  if (w.authMode === 'open')
    return (
      <span class="badge badge-open" title="Anyone who has the URL can start runs">
        Open: no authentication
      </span>
    );
  const sender = w.signatureScheme ? SENDER_NAMES[w.signatureScheme] : undefined;
  return <span>{sender ? `${sender} signature` : MODE_NAMES[w.authMode]}</span>;
}

export const Enabled = ({ enabled }: { enabled: boolean }) => (
  <span class={`status ${enabled ? 'status-SUCCEEDED' : 'status-CANCELLED'}`}>{enabled ? 'Enabled' : 'Disabled'}</span>
);

/** The webhooks list: each row links to its webhook's page. */
export const webhooksPage = (session: ConsoleSession, webhooks: ListedWebhook[]) =>
  page(
    { title: 'Webhooks', session, section: '/console/webhooks' },
    <>
      <p>
        <a href="/console/webhooks/new" class="action-link">
          Create webhook
        </a>
      </p>
      {webhooks.length === 0 ? (
        <p>No webhooks yet.</p>
      ) : (
        <Table caption="Webhooks, newest first">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Workflow</th>
              <th scope="col">Authentication</th>
              <th scope="col">Enabled</th>
              <th scope="col">Last trigger</th>
            </tr>
          </thead>
          <tbody>
            {webhooks.map((w) => (
              <tr key={w.id}>
                <td>
                  <a href={`/console/webhooks/${w.id}`}>{w.name}</a>
                </td>
                <td>
                  <a href={`/console/workflows/${w.workflowId}`}>{w.workflowName}</a>
                </td>
                <td>
                  <AuthMode w={w} />
                </td>
                <td>
                  <Enabled enabled={w.enabled} />
                </td>
                <td>{w.lastTriggeredAt === null ? <span class="muted">never</span> : <Time ms={w.lastTriggeredAt} />}</td>
              </tr>
            ))}
          </tbody>
        </Table>
      )}
    </>,
  );
