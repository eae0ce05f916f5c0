import type { ComponentChildren } from 'preact';
import { AppError, type FieldError } from '../../../../shared/errors.ts';

// The fields of the settings forms (schedules, secrets, channels): a label, the control, a hint and
// the field's error next to it (`aria-describedby`, `aria-invalid`), the first invalid field focused.

/** The errors a refused form shows, by field name; `form`: those of no field (shown above the form). */
export type FormErrors = { fields: Record<string, string>; form: string[] };
export const noErrors: FormErrors = { fields: {}, form: [] };

/**
 * Field errors (the API's paths) by the form field that shows each: a path's first segment
 * (`variables.env` → `variables`) when it is one of `fields`, else a message above the form.
 */
export function byField(errors: readonly FieldError[], fields: readonly string[]): FormErrors {
  const out: FormErrors = { fields: {}, form: [] };
  for (const e of errors) {
    const head = e.path.split('.')[0] ?? '';
    const field = fields.includes(e.path) ? e.path : fields.includes(head) ? head : undefined;
    if (field === undefined) out.form.push(e.path ? `${e.path}: ${e.message}` : e.message);
    else out.fields[field] = out.fields[field] ? `${out.fields[field]}; ${e.message}` : e.message;
  }
  return out;
}

/** An AppError's field errors (a 400 `VALIDATION_FAILED` and the like), or its detail as a form error. */
export function errorsOf(e: AppError, fields: readonly string[]): FormErrors {
  const errs = (e.extra.body?.errors as FieldError[] | undefined) ?? [];
  const out = byField(errs, fields);
  if (errs.length === 0) out.form.push(e.message);
  return out;
}

/** The first of `order` with an error: it gets `autofocus`. */
export const firstInvalid = (errors: FormErrors, order: readonly string[]) => order.find((f) => errors.fields[f] !== undefined);

/** What a control takes to be described by its hint and error. */
export function described(id: string, error: string | undefined, hint: boolean, focus: boolean) {
  const by = [hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ');
  return {
    id,
    'aria-invalid': error ? ('true' as const) : undefined,
    'aria-describedby': by || undefined,
    autofocus: focus || undefined,
  };
}

/** A field: its label, the control (`children`, given `described(...)`'s attributes), its hint and its error. */
export function Field(props: {
  id: string;
  label: string;
  hint?: ComponentChildren;
  error?: string | undefined;
  children: ComponentChildren;
}) {
  return (
    <div class="field">
      <label for={props.id}>{props.label}</label>
      {props.children}
      {props.hint ? (
        <small id={`${props.id}-hint`} class="muted hint">
          {props.hint}
        </small>
      ) : null}
      {props.error ? (
        <small id={`${props.id}-error`} class="hint error">
          {props.error}
        </small>
      ) : null}
    </div>
  );
}

/** The form's own errors (those of no field), as an alert above it. */
export function FormAlert({ errors, what }: { errors: FormErrors; what: string }) {
  const count = Object.keys(errors.fields).length;
  if (count === 0 && errors.form.length === 0) return null;
  return (
    <div role="alert" class="form-alert">
      <p>
        <strong>{what}</strong>
        {count ? ` ${count === 1 ? 'One field needs' : `${count} fields need`} a change: see below.` : ''}
      </p>
      {errors.form.length ? (
        <ul>
          {errors.form.map((m, i) => (
            <li key={String(i)}>{m}</li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}

/** Whether `e` is an AppError the form shows (a refusal), not a failure of the service. */
export const isRefusal = (e: unknown): e is AppError => e instanceof AppError && e.kind !== 'internal';
