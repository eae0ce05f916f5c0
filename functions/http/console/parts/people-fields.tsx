import type { ComponentChildren } from 'preact';
import { AppError, type FieldError } from '../../../../shared/errors.ts';

// Form fields of the keys, members and account pages: each field's error (the same zod errors as the
// API's, by path) is shown under it, tied to it by `aria-describedby`, the field marked `aria-invalid`,
// and the first invalid field of the form has `autofocus` (focus moves to the first error without script).

/** A refused form's errors, by field path (the first message of each). */
export type Errors = Record<string, string>;

export const errorsOf = (errors: readonly FieldError[]): Errors => {
  const out: Errors = {};
  for (const e of errors) out[e.path.split('.')[0] ?? e.path] ??= e.message;
  return out;
};

/** The field errors of a validation refusal (`VALIDATION_FAILED` and its kin carry `errors`), or undefined for any other error. */
export function fieldErrorsOf(e: unknown): Errors | undefined {
  if (!(e instanceof AppError) || e.kind !== 'invalid') return undefined;
  const errors = (e.extra.body?.errors ?? []) as FieldError[];
  return errors.length ? errorsOf(errors) : undefined;
}

/** The first of `order` that has an error: it gets the focus. */
export const firstInvalid = (errors: Errors, order: readonly string[]) => order.find((f) => errors[f] !== undefined);

/** What a field with an error carries: `aria-invalid`, `aria-describedby` to its message, `autofocus` when it is the first. */
export const invalidProps = (id: string, error: string | undefined, first: boolean) =>
  error === undefined ? {} : { 'aria-invalid': 'true' as const, 'aria-describedby': `${id}-error`, ...(first ? { autofocus: true } : {}) };

/** A field's error message, under it. */
export const FieldMessage = ({ id, error }: { id: string; error: string | undefined }) =>
  error === undefined ? null : (
    <small class="error" id={`${id}-error`}>
      {error}
    </small>
  );

/** The form's summary of its errors (announced), above its fields. */
export const ErrorSummary = ({ errors }: { errors: Errors }) => {
  const n = Object.keys(errors).length;
  return n === 0 ? null : (
    <p role="alert" class="notice error">
      {n === 1 ? 'The form has an error: see the field marked below.' : `The form has ${n} errors: see the fields marked below.`}
    </p>
  );
};

/** A labelled input with its error. */
export function Field(props: {
  id: string;
  name: string;
  label: string;
  value?: string;
  type?: 'text' | 'number' | 'email' | 'password';
  errors: Errors;
  first: string | undefined;
  hint?: ComponentChildren;
  autocomplete?: string;
  required?: boolean;
  min?: number;
  max?: number;
  maxLength?: number;
}) {
  const { id, name, label, errors, first, hint, type = 'text' } = props;
  const error = errors[name];
  return (
    <>
      <label for={id}>{label}</label>
      <input
        {...({
          id,
          name,
          type,
          value: props.value ?? '',
          autocomplete: props.autocomplete ?? 'off',
          ...(props.required ? { required: true } : {}),
          ...(props.min !== undefined ? { min: props.min } : {}),
          ...(props.max !== undefined ? { max: props.max } : {}),
          ...(props.maxLength !== undefined ? { maxLength: props.maxLength } : {}),
          ...invalidProps(id, error, first === name),
        } as object)}
      />
      <FieldMessage id={id} error={error} />
      {hint ? <small class="hint">{hint}</small> : null}
    </>
  );
}

/** A number field's value as the API's JSON would carry it: a number when it reads as one, else the text (zod names the error). */
export const numberOrText = (s: string) => (/^\s*-?\d+(\.\d+)?\s*$/.test(s) ? Number(s) : s.trim() === '' ? undefined : s);
