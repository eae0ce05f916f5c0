import type { ConsoleSession } from '../../../../../shared/console/auth.ts';
import { Status, Time } from '../../../../../shared/console/components.tsx';
import { Csrf, page } from '../../../../../shared/console/render.tsx';
import type { KeyRow } from './list-view.tsx';

/** "Revoke key 'name'?": a GET page whose button "Revoke" POSTs to the same path. */
export function revokeConfirmPage(session: ConsoleSession, key: KeyRow) {
  const mine = key.ownerId === session.principal.userId;
  return page(
    { title: `Revoke key '${key.name}'?`, session, section: '/console/keys' },
    <>
      <p>
        The key is <Status value={key.status} />, made <Time ms={key.createdAt} />, with the scopes <code>{key.scopes.join(', ')}</code>.
        Once revoked, every call with its token is refused at once (401), and it cannot be restored: the caller needs a new key.
      </p>
      <form method="post" action={`/console/keys/${key.id}/revoke`}>
        <Csrf session={session} />
        {mine ? null : <input type="hidden" name="all" value="1" />}
        <div class="actions">
          <button type="submit" class="secondary">
            Revoke
          </button>
          <a href={mine ? '/console/keys' : '/console/keys?all=1'}>Back to API keys</a>
        </div>
      </form>
    </>,
  );
}
