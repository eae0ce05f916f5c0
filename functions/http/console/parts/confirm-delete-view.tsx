import type { ConsoleSession } from '../../../../shared/console/auth.ts';
import { Csrf, page } from '../../../../shared/console/render.tsx';

// The confirmation of a delete on the settings pages (schedules, secrets, channels): names the object;
// its button, of the same name as the title's verb, POSTs with the CSRF token.

export type ConfirmDelete = {
  /** The navigation's section. */
  section: string;
  /** What is deleted, as named in the title: `schedule 'nightly'`. */
  what: string;
  /** Where the form POSTs. */
  action: string;
  /** Where "Cancel" goes. */
  back: string;
  detail: string;
};

export function confirmDeletePage(session: ConsoleSession, c: ConfirmDelete) {
  const title = `Delete ${c.what}?`;
  return page(
    { title, session, section: c.section },
    <form method="post" action={c.action}>
      <Csrf session={session} />
      <p>{c.detail}</p>
      <p>This cannot be undone.</p>
      <div class="actions">
        <button type="submit" class="secondary">
          Delete
        </button>
        <a href={c.back}>Cancel</a>
      </div>
    </form>,
  );
}
