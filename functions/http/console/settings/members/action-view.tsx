import type { ConsoleSession } from '../../../../../shared/console/auth.ts';
import { Status } from '../../../../../shared/console/components.tsx';
import { Csrf, page } from '../../../../../shared/console/render.tsx';
import { RoleSelect } from './form.tsx';
import type { Member } from './list-view.tsx';
import type { Errors } from '../../parts/people-fields.tsx';

export const MEMBER_ACTIONS = ['role', 'disable', 'enable', 'remove'] as const;
export type MemberAction = (typeof MEMBER_ACTIONS)[number];

const TITLE: Record<MemberAction, (email: string) => string> = {
  role: (e) => `Change the role of '${e}'?`,
  disable: (e) => `Disable member '${e}'?`,
  enable: (e) => `Enable member '${e}'?`,
  remove: (e) => `Remove member '${e}'?`,
};
const BUTTON: Record<MemberAction, string> = { role: 'Change role', disable: 'Disable', enable: 'Enable', remove: 'Remove' };

function What({ action }: { action: MemberAction }) {
  switch (action) {
    case 'role':
      return <p>An admin manages members and every key, workflow and webhook of the account; a member manages their own.</p>;
    case 'disable':
      return (
        <p>
          Their sessions end at once and their API keys are suspended (refused) until they are enabled again. Their workflows, webhooks and
          runs stay.
        </p>
      );
    case 'enable':
      return <p>They can sign in again. Their old sessions do not come back; their API keys stay suspended unless you restore them.</p>;
    case 'remove':
      return (
        <p>
          They can no longer sign in, and every API key they own is revoked. Their workflows, webhooks and runs stay with the account. This
          cannot be undone.
        </p>
      );
  }
}

/**
 * The confirmation of a member action, naming them; its button POSTs to the same path. A refusal (the
 * last admin, a concurrent change) is the same page with the domain's message beside the button.
 */
export function memberActionPage(
  session: ConsoleSession,
  m: Member,
  action: MemberAction,
  opts: { refusal?: string; errors?: Errors; role?: string; status?: number } = {},
) {
  const errors = opts.errors ?? {};
  const href = `/console/members/${m.id}/${action}`;
  return page(
    { title: TITLE[action](m.email), session, section: '/console/members', status: opts.status ?? 200 },
    <>
      <p>
        {m.email} is {m.role === 'admin' ? 'an admin' : 'a member'}, <Status value={m.disabled ? 'disabled' : 'enabled'} />.
      </p>
      <What action={action} />
      <form method="post" action={href} novalidate>
        <Csrf session={session} />
        {action === 'role' ? <RoleSelect id="member-role" value={opts.role ?? m.role} errors={errors} first="role" /> : null}
        {action === 'enable' ? (
          <label>
            <input type="checkbox" name="restoreKeys" value="true" /> Restore their API keys (their unrevoked keys work again)
          </label>
        ) : null}
        {opts.refusal ? (
          <p role="alert" class="notice error" id="member-action-refusal">
            {opts.refusal}
          </p>
        ) : null}
        <div class="actions">
          <button
            type="submit"
            class={action === 'remove' || action === 'disable' ? 'secondary' : undefined}
            {...(opts.refusal ? { 'aria-describedby': 'member-action-refusal' } : {})}
          >
            {BUTTON[action]}
          </button>
          <a href="/console/members">Back to members</a>
        </div>
      </form>
    </>,
  );
}
