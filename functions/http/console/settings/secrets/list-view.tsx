import type { ConsoleSession } from '../../../../../shared/console/auth.ts';
import { Table, Time } from '../../../../../shared/console/components.tsx';
import { page } from '../../../../../shared/console/render.tsx';
import { type ConsoleSecret, USE_SCAN_WORKFLOWS } from '../../../../../shared/domain/secret-console.ts';

// The secrets list: names and rules, who set each and when, where each is used; never a value.

const enc = encodeURIComponent;

function Uses({ s }: { s: ConsoleSecret }) {
  if (s.usedBy.length === 0) return <span class="muted">not referenced</span>;
  return (
    <ul class="plain">
      {s.usedBy.map((u) => (
        <li key={`${u.workflowId}-${u.where}`}>
          <a href={`/console/workflows/${u.workflowId}`}>{u.workflowName}</a> <span class="muted">({u.where})</span>
        </li>
      ))}
    </ul>
  );
}

export function secretsPage(session: ConsoleSession, secrets: ConsoleSecret[], scannedAll: boolean) {
  const admin = session.principal.role === 'admin';
  return page(
    { title: 'Secrets', session, section: '/console/secrets' },
    <section>
      <p>
        Values are write-only: this console never shows them. Definitions use a secret as <code>{'{% $secrets.NAME %}'}</code>.
      </p>
      {admin ? (
        <p>
          <a href="/console/secrets/new">Create secret</a>
        </p>
      ) : (
        <p class="muted">Only admins create, change and delete secrets.</p>
      )}
      {secrets.length === 0 ? (
        <p>No secrets yet.</p>
      ) : (
        <Table caption="Account secrets by name">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Allowed hosts</th>
              <th scope="col">Member use</th>
              <th scope="col">Updated</th>
              <th scope="col">Last used</th>
              <th scope="col">Used by</th>
              {admin ? <th scope="col">Actions</th> : null}
            </tr>
          </thead>
          <tbody>
            {secrets.map((s) => (
              <tr key={s.name}>
                <th scope="row">
                  <code>{s.name}</code>
                </th>
                <td>{s.allowedHosts ? s.allowedHosts.join(', ') : <span class="muted">any host</span>}</td>
                <td>{s.members === 'use' ? 'Members may use' : 'Admins only'}</td>
                <td>
                  <Time ms={s.updatedAt} />
                  {s.updatedBy ? <div class="muted">by {s.updatedBy}</div> : null}
                </td>
                <td>{s.lastUsedAt ? <Time ms={s.lastUsedAt} /> : <span class="muted">never</span>}</td>
                <td>
                  <Uses s={s} />
                </td>
                {admin ? (
                  <td class="row-actions">
                    <a href={`/console/secrets/${enc(s.name)}/edit`} aria-label={`Replace value of ${s.name}`}>
                      Replace value
                    </a>
                    {' · '}
                    <a href={`/console/secrets/${enc(s.name)}/delete`} aria-label={`Delete ${s.name}`}>
                      Delete
                    </a>
                  </td>
                ) : null}
              </tr>
            ))}
          </tbody>
        </Table>
      )}
      {scannedAll ? null : <p class="muted">"Used by" reads the newest {USE_SCAN_WORKFLOWS} workflows; older ones are not shown there.</p>}
    </section>,
  );
}
