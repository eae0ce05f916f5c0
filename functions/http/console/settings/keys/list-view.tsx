import type { ConsoleSession } from '../../../../../shared/console/auth.ts';
import { Status, Table, Time } from '../../../../../shared/console/components.tsx';
import { page } from '../../../../../shared/console/render.tsx';
import type { keyView, Scope } from '../../../../../shared/domain/keys.ts';

export type KeyRow = ReturnType<typeof keyView>;

/** What each scope lets a key do, beside its checkbox and in the list. */
export const SCOPE_MEANINGS = {
  WORKFLOW_READ: 'read workflows and their versions, runs, their results and artifacts',
  WORKFLOW_EXECUTE: 'start runs, and cancel, retry, rerun or resume them',
  WEBHOOK_TRIGGER: 'trigger the webhooks bound to this key',
  APPROVAL_RESPOND: 'decide approvals by API call or one-click link',
  AUDIT_READ: "read the audit log as the key's owner may (an admin every entry, a member their own), and export it",
} as const satisfies Record<Scope, string>;

/** A day as `YYYY-MM-DD` (UTC) in a `<time>`, the full time in its title: the list stays narrow. */
const Day = ({ ms }: { ms: number }) => {
  const iso = new Date(ms).toISOString();
  return (
    <time datetime={iso} title={`${iso.replace('T', ' ').slice(0, 19)} UTC`} class="nowrap">
      {iso.slice(0, 10)}
    </time>
  );
};

/** The keys list: mine, or (admins, "All keys") the account's with their owners; "Revoke" on each live key. */
export function keysPage(session: ConsoleSession, keys: KeyRow[], all: boolean, owners: ReadonlyMap<string, string>) {
  const admin = session.principal.role === 'admin';
  return page(
    { title: 'API keys', session, section: '/console/keys' },
    <section>
      <p>
        Keys call the API (<code>Authorization: Bearer dyk_…</code>) with the scopes they carry. A key's token is shown once, when it is
        made.
      </p>
      <div class="actions">
        <a href="/console/keys/new" class="link-button">
          Create key
        </a>
        {admin ? (
          <nav aria-label="Whose keys" class="scope">
            <ul>
              <li>
                <a href="/console/keys" aria-current={all ? undefined : 'page'}>
                  My keys
                </a>
              </li>
              <li>
                <a href="/console/keys?all=1" aria-current={all ? 'page' : undefined}>
                  All keys
                </a>
              </li>
            </ul>
          </nav>
        ) : null}
      </div>
      {keys.length === 0 ? (
        <p>{all ? 'The account has no API keys.' : 'You have no API keys yet.'}</p>
      ) : (
        <Table caption={all ? "The account's API keys" : 'My API keys'}>
          <thead>
            <tr>
              <th scope="col">Name</th>
              {all ? <th scope="col">Owner</th> : null}
              <th scope="col">Scopes</th>
              <th scope="col">Created</th>
              <th scope="col">Expires</th>
              <th scope="col">Last used</th>
              <th scope="col">Use count</th>
              <th scope="col">Status</th>
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {keys.map((k) => (
              <tr key={k.id}>
                <th scope="row">{k.name}</th>
                {all ? <td>{owners.get(k.ownerId) ?? k.ownerId}</td> : null}
                <td>
                  {k.scopes.map((s) => (
                    <code key={s} class="scope-name" title={SCOPE_MEANINGS[s]}>
                      {s}
                    </code>
                  ))}
                </td>
                <td>
                  <Day ms={k.createdAt} />
                </td>
                <td>
                  <Day ms={k.expiresAt} />
                </td>
                <td>
                  <Time ms={k.usage.lastUsedAt ?? undefined} />
                </td>
                <td>
                  {k.usage.total.toLocaleString('en')} <span class="muted">({k.usage.today.toLocaleString('en')} today)</span>
                </td>
                <td>
                  <Status value={k.status} />
                </td>
                <td>
                  {k.status === 'revoked' ? null : (
                    <a href={`/console/keys/${k.id}/revoke`} aria-label={`Revoke key ${k.name}`}>
                      Revoke
                    </a>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </Table>
      )}
    </section>,
  );
}
