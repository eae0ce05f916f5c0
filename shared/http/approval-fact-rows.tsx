import type { Approval } from '../db/entities/approval.ts';
import type { ApprovalFacts } from '../domain/approval-facts.ts';
import { Row } from './html.tsx';
import { Time } from './time.tsx';

// What the link pages (the one-click link's confirmation page, a reviewer's link page) show of an
// approval: the step, its workflow by name, the run and its inputs, when it was asked and its deadline,
// and the step's form as inputs. Every value is text to Preact (escaped by construction).

/** Form inputs are named `field.<name>`; the POST turns them back into the step's form values. */
export const FIELD_PREFIX = 'field.';

type Field = NonNullable<Approval['form']>[number];
const text = (v: unknown) => (v === undefined || v === null ? '' : String(v));

/** A required field with no default: approving needs a value for it (the page asks; the POST enforces it). */
export const needsValue = (f: Field) => f.required === true && (f.default === undefined || f.default === null || f.default === '');

/** One field of the step's form, its default filled in; `required` when approving needs it. */
function Input({ f }: { f: Field }) {
  const name = `${FIELD_PREFIX}${f.name}`;
  const id = `f-${f.name}`;
  const Option = ({ value, shown }: { value: unknown; shown: string }) => (
    <option value={text(value)} selected={text(value) === text(f.default)}>
      {shown}
    </option>
  );
  return (
    <>
      <label for={id}>
        {f.label ?? f.name}
        {f.required ? ' (required)' : ''}
      </label>
      {f.type === 'boolean' ? (
        <select id={id} name={name}>
          <Option value={true} shown="Yes" />
          <Option value={false} shown="No" />
        </select>
      ) : f.enum ? (
        <select id={id} name={name} required={f.required}>
          {f.enum.map((v) => (
            <Option key={text(v)} value={v} shown={text(v)} />
          ))}
        </select>
      ) : f.type === 'number' ? (
        <input id={id} name={name} type="number" step="any" value={text(f.default)} required={f.required} />
      ) : (
        <input id={id} name={name} type="text" value={text(f.default)} required={f.required} />
      )}
    </>
  );
}

/** The step's form, as the fields of the page's form (nothing when it has none). */
export const FormFields = ({ a }: { a: Approval }) =>
  a.form?.length ? (
    <fieldset>
      <legend>Form</legend>
      {a.form.map((f) => (
        <Input key={f.name} f={f} />
      ))}
    </fieldset>
  ) : null;

/** The run's inputs, one per line (`env: "production"`), or "none". */
function Inputs({ inputs }: { inputs: Record<string, unknown> | undefined }) {
  const entries = Object.entries(inputs ?? {});
  if (entries.length === 0) return <>none</>;
  return (
    <ul class="inputs">
      {entries.map(([k, v]) => (
        <li key={k}>
          <code>{k}</code>: <code>{JSON.stringify(v) ?? 'undefined'}</code>
        </li>
      ))}
    </ul>
  );
}

/** The approval's facts as rows of the page's `<dl>`. */
export const FactRows = ({ a, facts }: { a: Approval; facts: ApprovalFacts }) => (
  <>
    <Row label="Step">{a.title}</Row>
    {a.description ? <Row label="Details">{a.description}</Row> : null}
    <Row label="Workflow">{facts.workflowName ?? a.workflowId}</Row>
    <Row label="Run">{a.executionId}</Row>
    <Row label="Inputs">
      <Inputs inputs={facts.inputs} />
    </Row>
    <Row label="Requested">
      <Time ms={a.createdAt} />
    </Row>
    {a.expiresAt !== undefined ? (
      <Row label="Deadline">
        <Time ms={a.expiresAt} />
      </Row>
    ) : null}
  </>
);
