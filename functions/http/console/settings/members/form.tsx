import { newFormId } from '../../../../../shared/domain/form-once.ts';
import type { ConsoleSession } from '../../../../../shared/console/auth.ts';
import { Csrf, page } from '../../../../../shared/console/render.tsx';
import { OnceSecret } from '../keys/form.tsx';
import { ErrorSummary, type Errors, Field, FieldMessage, firstInvalid, invalidProps } from '../../parts/people-fields.tsx';

export type MemberInput = { email: string; role: string; formId: string };
export const ROLES = ['member', 'admin'] as const;
const FIELD_ORDER = ['email', 'role'] as const;

export const emptyMemberInput = (): MemberInput => ({ email: '', role: 'member', formId: newFormId() });

/** A role choice (the add form, "Change role"), with its error. */
export function RoleSelect({ id, value, errors, first }: { id: string; value: string; errors: Errors; first: string | undefined }) {
  return (
    <>
      <label for={id}>Role</label>
      <select id={id} name="role" {...(invalidProps(id, errors.role, first === 'role') as object)}>
        {ROLES.map((r) => (
          <option key={r} value={r} selected={value === r}>
            {r === 'admin' ? 'admin (manages members, every key and workflow)' : 'member'}
          </option>
        ))}
      </select>
      <FieldMessage id={id} error={errors.role} />
    </>
  );
}

/** "Add member" (admins): email and role; the server makes the initial password and shows it once. */
export function memberFormPage(session: ConsoleSession, input: MemberInput, errors: Errors = {}, status = 200) {
  const first = firstInvalid(errors, FIELD_ORDER);
  return page(
    { title: 'Add member', session, section: '/console/members', status },
    <form method="post" action="/console/members" novalidate>
      <Csrf session={session} />
      <input type="hidden" name="formId" value={input.formId} />
      <ErrorSummary errors={errors} />
      <Field id="member-email" name="email" label="Email" type="email" value={input.email} errors={errors} first={first} maxLength={254} />
      <RoleSelect id="member-role" value={input.role} errors={errors} first={first} />
      <p class="muted">An initial password is made for them and shown to you once; they change it under Account after signing in.</p>
      <div class="actions">
        <button type="submit">Add member</button>
        <a href="/console/members">Cancel</a>
      </div>
    </form>,
  );
}

/** The POST's answer (no redirect: the password is in no URL): the initial password once, `Cache-Control: no-store`. */
export function memberCreatedPage(session: ConsoleSession, member: { email: string; role: string }, password: string) {
  return page(
    { title: 'Member added', session, section: '/console/members', headers: { 'cache-control': 'no-store' } },
    <section>
      <p role="status">
        <strong>{member.email}</strong> was added as {member.role}. This password is shown only once: give it to them by a safe way; they
        sign in with it and change it under Account. Reloading this page will not show it again.
      </p>
      <OnceSecret id="member-password" label="Initial password" value={password} />
      <p>
        <a href="/console/members">Back to members</a>
      </p>
    </section>,
  );
}
