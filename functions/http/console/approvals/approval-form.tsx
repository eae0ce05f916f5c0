import type { ConsoleSession } from '../../../../shared/console/auth.ts';
import { Table } from '../../../../shared/console/components.tsx';
import { Csrf } from '../../../../shared/console/render.tsx';
import type { Approval } from '../../../../shared/domain/read-types.ts';

// The approval page's form (editable, for a reviewer who may decide) and its read-only table.

type Field = NonNullable<Approval['form']>[number];

/** Form inputs are named `field.<name>` (as on a reviewer's link page); the POST turns them back into the step's values. */
export const FIELD_PREFIX = 'field.';

/** What a refused POST shows on the page it re-renders: why, and what was typed (kept, with each field's error). */
export type Attempt = {
  status: number;
  notice: string;
  values?: Record<string, string>;
  comment?: string;
  errors?: Record<string, string>;
};

const text = (v: unknown) => (v === undefined || v === null ? '' : String(v));
export const yesNo = (v: unknown) => (v === true ? 'Yes' : v === false ? 'No' : text(v));

/** One form field, labelled by its label (or name), its default (or what was sent) filled in. */
function FormInput({ f, index, sent, error }: { f: Field; index: number; sent: string | undefined; error: string | undefined }) {
  const id = `field-${index}`;
  const value = sent ?? text(f.default);
  const described = [f.required ? `${id}-required` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ') || undefined;
  const common = {
    id,
    name: `${FIELD_PREFIX}${f.name}`,
    required: f.required,
    'aria-invalid': error ? ('true' as const) : undefined,
    'aria-describedby': described,
  };
  const options = f.type === 'boolean' ? [true, false] : f.enum;
  return (
    <div class="field">
      <label for={id}>{f.label ?? f.name}</label>
      {options ? (
        <select {...common}>
          {f.default === undefined || !options.some((o) => text(o) === value) ? (
            <option value="" selected={value === ''}>
              {f.required ? 'Choose…' : '(none)'}
            </option>
          ) : null}
          {options.map((o) => (
            <option key={text(o)} value={text(o)} selected={text(o) === value}>
              {f.type === 'boolean' ? yesNo(o) : text(o)}
            </option>
          ))}
        </select>
      ) : f.type === 'number' ? (
        <input {...common} type="number" step="any" value={value} />
      ) : (
        <input {...common} type="text" value={value} />
      )}
      {f.required ? (
        <small id={`${id}-required`} class="muted hint">
          Required
        </small>
      ) : null}
      {error ? (
        <small id={`${id}-error`} class="hint error">
          {error}
        </small>
      ) : null}
    </div>
  );
}

/** The form a reviewer decides with: the step's fields, a comment, "Approve" and "Reject". */
export function DecisionForm({ session, a, attempt }: { session: ConsoleSession; a: Approval; attempt: Attempt | undefined }) {
  return (
    <form method="post" action={`/console/approvals/${a.approvalId}`}>
      <Csrf session={session} />
      {a.form?.length ? (
        <fieldset>
          <legend>Form</legend>
          {a.form.map((f, i) => (
            <FormInput key={f.name} f={f} index={i} sent={attempt?.values?.[f.name]} error={attempt?.errors?.[f.name]} />
          ))}
        </fieldset>
      ) : null}
      <label for="comment">Comment</label>
      <textarea id="comment" name="comment" maxlength={2000} rows={3} aria-describedby="comment-hint">
        {attempt?.comment ?? ''}
      </textarea>
      <small id="comment-hint" class="muted hint">
        Optional. Recorded with your decision.
      </small>
      <div class="actions">
        <button type="submit" name="decision" value="approve">
          Approve
        </button>
        {/* A rejection needs no form values: the browser does not ask for the required ones. */}
        <button type="submit" name="decision" value="reject" class="secondary" formnovalidate>
          Reject
        </button>
      </div>
      <p class="muted">Nothing is recorded until you press a button. You decide as {session.email}.</p>
    </form>
  );
}

/** The step's form, read only: its fields and their defaults (or the values an approval applied). */
export function FormTable({ a }: { a: Approval }) {
  if (!a.form?.length) return null;
  const applied = a.formData;
  return (
    <Table caption="Form">
      <thead>
        <tr>
          <th scope="col">Field</th>
          <th scope="col">Type</th>
          <th scope="col">{applied ? 'Value applied' : 'Default'}</th>
        </tr>
      </thead>
      <tbody>
        {a.form.map((f) => (
          <tr key={f.name}>
            <th scope="row">{f.label ?? f.name}</th>
            <td>
              {f.type}
              {f.required ? ', required' : ''}
              {f.enum ? ` (one of ${f.enum.map(text).join(', ')})` : ''}
            </td>
            <td>{yesNo(applied ? applied[f.name] : f.default) || <span class="muted">none</span>}</td>
          </tr>
        ))}
      </tbody>
    </Table>
  );
}
