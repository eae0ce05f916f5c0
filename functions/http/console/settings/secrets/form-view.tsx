import type { ConsoleSession } from '../../../../../shared/console/auth.ts';
import { Csrf, page } from '../../../../../shared/console/render.tsx';
import { described, Field, type FormErrors, FormAlert, firstInvalid } from '../../parts/labelled-field.tsx';

// "Create secret" and "Replace value": the value is typed, never shown (not even after a refused
// form: it is asked for again); hosts one per line; whether members may use it.

export const SECRET_FIELDS = ['name', 'value', 'allowedHosts', 'members'] as const;
export type SecretDraft = { name: string; allowedHosts: string; members: 'use' | 'none' };

export function secretFormPage(
  session: ConsoleSession,
  opts: { mode: 'create' | 'edit'; draft: SecretDraft; errors: FormErrors; status?: number; valueSent?: boolean },
) {
  const { draft: d, errors, mode } = opts;
  const focus = firstInvalid(errors, SECRET_FIELDS);
  const at = (f: (typeof SECRET_FIELDS)[number], hint = true) => described(f, errors.fields[f], hint, focus === f);
  const action = mode === 'create' ? '/console/secrets/new' : `/console/secrets/${encodeURIComponent(d.name)}/edit`;
  const refused = Object.keys(errors.fields).length > 0 || errors.form.length > 0;
  return page(
    {
      title: mode === 'create' ? 'Create secret' : `Replace value of ${d.name}`,
      session,
      section: '/console/secrets',
      status: opts.status ?? 200,
    },
    <form method="post" action={action}>
      <FormAlert errors={errors} what={mode === 'create' ? 'The secret was not created.' : 'The secret was not changed.'} />
      <Csrf session={session} />
      {mode === 'create' ? (
        <Field
          id="name"
          label="Name"
          hint="A-Z, 0-9 and _, starting with a letter; definitions use it as $secrets.NAME."
          error={errors.fields.name}
        >
          <input type="text" name="name" maxLength={64} value={d.name} required autocomplete="off" spellcheck={false} {...at('name')} />
        </Field>
      ) : null}
      <Field
        id="value"
        label={mode === 'create' ? 'Value' : 'New value'}
        hint={
          mode === 'create'
            ? refused && opts.valueSent
              ? 'Write-only: type the value again (it is never sent back to the browser).'
              : 'Write-only: stored sealed, never shown again.'
            : 'Write-only. Leave empty to keep the stored value and change only the rules below.'
        }
        error={errors.fields.value}
      >
        <textarea name="value" rows={3} autocomplete="off" spellcheck={false} required={mode === 'create'} {...at('value')} />
      </Field>
      <Field
        id="allowedHosts"
        label="Allowed hosts"
        hint="One per line (api.example.com, or *.example.com for its subdomains). Empty: any host."
        error={errors.fields.allowedHosts}
      >
        <textarea name="allowedHosts" rows={3} spellcheck={false} {...at('allowedHosts')}>
          {d.allowedHosts}
        </textarea>
      </Field>
      <Field
        id="members"
        label="Member use"
        hint="Whether members (not only admins) may save definitions that use it."
        error={errors.fields.members}
      >
        <select name="members" {...at('members')}>
          <option value="none" selected={d.members === 'none'}>
            Admins only
          </option>
          <option value="use" selected={d.members === 'use'}>
            Members may use
          </option>
        </select>
      </Field>
      <div class="actions">
        <button type="submit">{mode === 'create' ? 'Create secret' : 'Save'}</button>
        <a href="/console/secrets">Cancel</a>
      </div>
    </form>,
  );
}
