import { newFormId } from '../../../../../shared/domain/form-once.ts';
import type { ConsoleSession } from '../../../../../shared/console/auth.ts';
import { Csrf, page } from '../../../../../shared/console/render.tsx';
import { ALL_SCOPES } from '../../../../../shared/domain/keys.ts';
import { SCOPE_MEANINGS } from './list-view.tsx';
import { ErrorSummary, type Errors, Field, FieldMessage, firstInvalid } from '../../parts/people-fields.tsx';

/** What the form re-shows: the user's input as sent. */
export type KeyInput = { name: string; scopes: string[]; validityDays: string; formId: string };

export const FIELD_ORDER = ['name', 'scopes', 'validityDays'] as const;
export const DEFAULT_VALIDITY_DAYS = '90';

export const emptyKeyInput = (): KeyInput => ({ name: '', scopes: [], validityDays: DEFAULT_VALIDITY_DAYS, formId: newFormId() });

/**
 * "Create key": Name, a checkbox per scope with its meaning, Validity (days). The form carries a fresh
 * form id: its POST is done once (a reload of the result page makes no second key).
 */
export function keyFormPage(session: ConsoleSession, input: KeyInput, errors: Errors = {}, status = 200) {
  const first = firstInvalid(errors, FIELD_ORDER);
  const scopeError = errors.scopes;
  return page(
    { title: 'Create key', session, section: '/console/keys', status },
    <form method="post" action="/console/keys" novalidate>
      <Csrf session={session} />
      <input type="hidden" name="formId" value={input.formId} />
      <ErrorSummary errors={errors} />
      <Field id="key-name" name="name" label="Name" value={input.name} errors={errors} first={first} maxLength={100} />
      <fieldset {...(scopeError ? { 'aria-describedby': 'key-scopes-error' } : {})}>
        <legend>Scopes</legend>
        {ALL_SCOPES.map((s, i) => (
          <div key={s} class="scope-choice">
            <input
              type="checkbox"
              id={`key-scope-${s}`}
              name="scopes"
              value={s}
              checked={input.scopes.includes(s)}
              aria-describedby={`key-scope-${s}-meaning${scopeError ? ' key-scopes-error' : ''}`}
              {...(scopeError ? { 'aria-invalid': 'true' } : {})}
              {...(scopeError && first === 'scopes' && i === 0 ? { autofocus: true } : {})}
            />
            <label for={`key-scope-${s}`}>
              <code>{s}</code>
            </label>{' '}
            <span class="muted" id={`key-scope-${s}-meaning`}>
              {SCOPE_MEANINGS[s]}
            </span>
          </div>
        ))}
        <FieldMessage id="key-scopes" error={scopeError} />
      </fieldset>
      <Field
        id="key-validity"
        name="validityDays"
        label="Validity (days)"
        type="number"
        value={input.validityDays}
        errors={errors}
        first={first}
        min={1}
        max={365}
        hint="From 1 to 365 days; the key stops working then."
      />
      <div class="actions">
        <button type="submit">Create key</button>
        <a href="/console/keys">Cancel</a>
      </div>
    </form>,
  );
}

/** Props of an input that a user selects and copies (and our script's "Copy" button reads). */
const secretInput = (id: string, value: string) => ({ id, type: 'text', readOnly: true, value, autocomplete: 'off', spellcheck: false });

/** A secret shown this once: a readonly input to select, and "Copy" (console.js; without script the input is selectable). */
export function OnceSecret({ id, label, value }: { id: string; label: string; value: string }) {
  return (
    <div class="once-secret">
      <label for={id}>{label}</label>
      <div class="once-secret-row">
        <input {...(secretInput(id, value) as object)} class="mono" />
        <button type="button" class="secondary" data-copy-value={`#${id}`}>
          Copy
        </button>
      </div>
    </div>
  );
}

/** The POST's answer (never a redirect: the token is in no URL): the token once, with `Cache-Control: no-store`. */
export function keyCreatedPage(session: ConsoleSession, key: { id: string; name: string; token: string; expiresAt: number }) {
  return page(
    { title: 'API key created', session, section: '/console/keys', headers: { 'cache-control': 'no-store' } },
    <section>
      <p role="status">
        Key <strong>{key.name}</strong> was created. This token is shown only once: copy it now and keep it somewhere safe. Reloading this
        page will not show it again.
      </p>
      <OnceSecret id="key-token" label="Token" value={key.token} />
      <p>
        <a href="/console/keys">Back to API keys</a>
      </p>
    </section>,
  );
}
