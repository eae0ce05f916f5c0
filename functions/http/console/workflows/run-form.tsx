import type { ConsoleSession } from '../../../../shared/console/auth.ts';
import { Csrf, page } from '../../../../shared/console/render.tsx';
import { described, Field, type FormErrors, FormAlert, firstInvalid } from '../parts/labelled-field.tsx';
import { fieldOf, INPUT_FIELD, KEY_FIELD, type RunDraft, type RunVariable } from './run-inputs.ts';

// "Run workflow": a form built from the workflow's declared variables (or one JSON input), "Start run".

export type RunFormData = {
  workflow: { id: string; name: string; version: number };
  vars: RunVariable[];
  draft: RunDraft;
  errors: FormErrors;
  /** The form's one-time key, made when it is first shown (kept while the form is refused). */
  key: string;
  status?: number;
};

const TYPE_NAMES = { string: 'Text', number: 'A number', boolean: 'Yes or no', object: 'A JSON object', array: 'A JSON array' } as const;

function hintOf(v: RunVariable) {
  const what = v.description ? `${v.description}. ` : '';
  const empty = v.type === 'boolean' ? '' : v.default === undefined ? ' Required.' : ' Empty: the default.';
  return `${what}${TYPE_NAMES[v.type]}.${empty}`;
}

/** One variable's field: its control by type, described by its hint and its error. */
function VariableField({ v, d }: { v: RunVariable; d: RunFormData & { focus: string | undefined } }) {
  const id = fieldOf(v.name);
  const error = d.errors.fields[id];
  const at = described(id, error, true, d.focus === id);
  const value = d.draft[id] ?? '';
  const required = v.default === undefined && v.type !== 'boolean';
  if (v.type === 'boolean')
    return (
      <div class="field">
        <label for={id}>
          <input type="checkbox" name={id} value="true" checked={value === 'true'} {...at} /> {v.name}
        </label>
        <small id={`${id}-hint`} class="muted hint">
          {hintOf(v)}
        </small>
        {error ? (
          <small id={`${id}-error`} class="hint error">
            {error}
          </small>
        ) : null}
      </div>
    );
  return (
    <Field id={id} label={required ? `${v.name} (required)` : v.name} hint={hintOf(v)} error={error}>
      {v.type === 'object' || v.type === 'array' ? (
        <textarea name={id} rows={4} spellcheck={false} required={required} {...at}>
          {value}
        </textarea>
      ) : (
        <input
          type="text"
          name={id}
          value={value}
          inputMode={v.type === 'number' ? 'decimal' : undefined}
          autocomplete="off"
          spellcheck={false}
          required={required}
          {...at}
        />
      )}
    </Field>
  );
}

/** The form: a field per declared variable, or one JSON input; its CSRF token and one-time key; "Start run". */
export function runFormPage(session: ConsoleSession, d: RunFormData) {
  const { workflow: w } = d;
  const order = d.vars.length ? d.vars.map((v) => fieldOf(v.name)) : [INPUT_FIELD];
  const focus = firstInvalid(d.errors, order);
  return page(
    { title: `Run ${w.name}`, session, section: '/console/workflows', status: d.status ?? 200 },
    <form method="post" action={`/console/workflows/${w.id}/run`} id="run-form" novalidate>
      <FormAlert errors={d.errors} what="The run was not started." />
      <Csrf session={session} />
      <input type="hidden" name={KEY_FIELD} value={d.key} />
      <p class="muted wrap-anywhere">
        {`Starts a run of version ${w.version} with these values, as `}
        <code>{`POST /api/v1/workflows/${w.id}/runs`}</code>
        {' does, and opens its page.'}
      </p>
      {d.vars.length ? (
        d.vars.map((v) => <VariableField key={v.name} v={v} d={{ ...d, focus }} />)
      ) : (
        <Field
          id={INPUT_FIELD}
          label="Input (JSON)"
          hint={'This workflow declares no variables: a JSON object of the run\'s variables, e.g. {"env": "staging"}.'}
          error={d.errors.fields[INPUT_FIELD]}
        >
          <textarea
            name={INPUT_FIELD}
            rows={6}
            spellcheck={false}
            {...described(INPUT_FIELD, d.errors.fields[INPUT_FIELD], true, focus === INPUT_FIELD)}
          >
            {d.draft[INPUT_FIELD] ?? ''}
          </textarea>
        </Field>
      )}
      <div class="actions">
        <button type="submit">Start run</button>
        <a href={`/console/workflows/${w.id}`}>Cancel</a>
      </div>
    </form>,
  );
}
