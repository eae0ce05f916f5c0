import type { WorkflowDefinition } from '../../../../shared/engine/definition.ts';
import { hasType, type VariableType } from '../../../../shared/engine/variable-types.ts';
import type { FieldError } from '../../../../shared/errors.ts';

// The "Run workflow" form's fields, built from the workflow's declared variables (a field each: its
// type, default and description; one without a default is required), or one JSON "Input" when it
// declares none; and the run's variables read back from what was typed.

export type RunVariable = { name: string; type: VariableType; default?: unknown; description?: string | undefined };

/** The field of a variable: its form name and its id (variable names are identifiers: safe in both). */
export const fieldOf = (name: string) => `var-${name}`;
/** The one field of a workflow that declares no variables: a JSON object. */
export const INPUT_FIELD = 'input';
/** The form's one-time key (the run's Idempotency-Key): a double submit starts one run. */
export const KEY_FIELD = 'idempotencyKey';
export const isKey = (k: string | null): k is string => k !== null && /^[\x21-\x7e]{1,255}$/.test(k);

/** The declared variables, in their order. */
export const variablesOf = (d: Pick<WorkflowDefinition, 'variables'>): RunVariable[] =>
  Object.entries(d.variables ?? {}).map(([name, v]) => ({ name, type: v.type, default: v.default, description: v.description }));

/** What the form shows: each field's text as typed (a checkbox: `true` or empty). */
export type RunDraft = Record<string, string>;

const shown = (v: RunVariable): string => {
  if (v.default === undefined) return '';
  if (v.type === 'string') return v.default as string;
  if (v.type === 'boolean') return v.default === true ? 'true' : '';
  if (v.type === 'number') return String(v.default);
  return JSON.stringify(v.default, null, 2);
};

/** The form as first shown: each variable's default (a workflow without variables: `{}`). */
export const draftOfDefaults = (vars: RunVariable[]): RunDraft =>
  vars.length ? Object.fromEntries(vars.map((v) => [fieldOf(v.name), shown(v)])) : { [INPUT_FIELD]: '{}' };

/** The form's fields as sent. */
export const draftOf = (form: URLSearchParams, vars: RunVariable[]): RunDraft =>
  vars.length
    ? Object.fromEntries(vars.map((v) => [fieldOf(v.name), form.get(fieldOf(v.name)) ?? '']))
    : { [INPUT_FIELD]: form.get(INPUT_FIELD) ?? '' };

const article = (t: VariableType) => (t === 'array' || t === 'object' ? 'an' : 'a');

function parseJson(text: string): { ok: true; value: unknown } | { ok: false; message: string } {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (e) {
    return { ok: false, message: `is not JSON: ${(e as Error).message}` };
  }
}

/** One variable's value from its field: absent (the default applies), the value, or why not (path: its field). */
function typedValue(v: RunVariable, text: string): { value?: unknown; error?: string } {
  if (v.type === 'boolean') return { value: text === 'true' };
  if (text.trim() === '') return v.default === undefined ? { error: 'is required: this variable has no default' } : {};
  if (v.type === 'string') return { value: text };
  if (v.type === 'number') {
    const n = Number(text.trim());
    return Number.isFinite(n) ? { value: n } : { error: 'must be a number, such as 42 or -1.5' };
  }
  const parsed = parseJson(text);
  if (!parsed.ok) return { error: parsed.message };
  return hasType(parsed.value, v.type) ? { value: parsed.value } : { error: `must be ${article(v.type)} ${v.type} in JSON` };
}

/** The run's variables from the draft, or each field's error (by field id; nothing is started then). */
export function inputsOf(
  draft: RunDraft,
  vars: RunVariable[],
): { ok: true; variables: Record<string, unknown> } | { ok: false; errors: FieldError[] } {
  const errors: FieldError[] = [];
  if (!vars.length) {
    const text = (draft[INPUT_FIELD] ?? '').trim();
    if (text === '') return { ok: true, variables: {} };
    const parsed = parseJson(text);
    if (!parsed.ok) return { ok: false, errors: [{ path: INPUT_FIELD, message: parsed.message }] };
    const v = parsed.value;
    if (v === null || typeof v !== 'object' || Array.isArray(v))
      return { ok: false, errors: [{ path: INPUT_FIELD, message: 'must be a JSON object' }] };
    return { ok: true, variables: v as Record<string, unknown> };
  }
  const variables: Record<string, unknown> = {};
  for (const v of vars) {
    const got = typedValue(v, draft[fieldOf(v.name)] ?? '');
    if (got.error) errors.push({ path: fieldOf(v.name), message: got.error });
    else if (got.value !== undefined) variables[v.name] = got.value;
  }
  return errors.length ? { ok: false, errors } : { ok: true, variables };
}

/** The engine's error paths (`variables.<name>`, `variables`) as the form's fields. */
export const asFieldPath = (path: string, vars: RunVariable[]) => {
  const name = path.startsWith('variables.') ? path.slice('variables.'.length) : undefined;
  if (name !== undefined && vars.some((v) => v.name === name)) return fieldOf(name);
  return vars.length ? path : INPUT_FIELD;
};
