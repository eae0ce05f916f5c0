import type { ConsoleSession } from '../../../../../shared/console/auth.ts';
import { Status, Table, Time } from '../../../../../shared/console/components.tsx';
import { page } from '../../../../../shared/console/render.tsx';
import type { listMembers } from '../../../../../shared/domain/members.ts';

export type Member = Awaited<ReturnType<typeof listMembers>>['items'][number];

/** A member's actions (admins), each a confirmation page naming them. */
const ACTIONS = (m: Member) =>
  [
    { action: 'role', label: 'Change role' },
    m.disabled ? { action: 'enable', label: 'Enable' } : { action: 'disable', label: 'Disable' },
    { action: 'remove', label: 'Remove' },
  ] as const;

/** The members: everyone reads; admins get "Add member" and each member's actions (links to confirmation pages). */
export function membersPage(session: ConsoleSession, members: Member[]) {
  const admin = session.principal.role === 'admin';
  return page(
    { title: 'Members', session, section: '/console/members' },
    <section>
      {admin ? (
        <p>
          <a href="/console/members/new" class="link-button">
            Add member
          </a>
        </p>
      ) : (
        <p class="muted">Only the account's admins add, change and remove members.</p>
      )}
      <Table caption="The account's members">
        <thead>
          <tr>
            <th scope="col">Email</th>
            <th scope="col">Role</th>
            <th scope="col">Status</th>
            <th scope="col">Created</th>
            <th scope="col">Slack user id</th>
            {admin ? (
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            ) : null}
          </tr>
        </thead>
        <tbody>
          {members.map((m) => (
            <tr key={m.id}>
              <th scope="row">
                {m.email}
                {m.id === session.principal.userId ? <span class="muted"> (you)</span> : null}
              </th>
              <td>{m.role}</td>
              <td>
                <Status value={m.disabled ? 'disabled' : 'enabled'} />
              </td>
              <td>
                <Time ms={m.createdAt} />
              </td>
              <td>{m.slackUserId ? <code>{m.slackUserId}</code> : <span class="muted">—</span>}</td>
              {admin ? (
                <td>
                  <ul class="row-actions">
                    {ACTIONS(m).map((a) => (
                      <li key={a.action}>
                        <a href={`/console/members/${m.id}/${a.action}`} aria-label={`${a.label} ${m.email}`}>
                          {a.label}
                        </a>
                      </li>
                    ))}
                  </ul>
                </td>
              ) : null}
            </tr>
          ))}
        </tbody>
      </Table>
    </section>,
  );
}
