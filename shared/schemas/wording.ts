// Schema refusals in plain words, for people who write JSON by hand (the console's editor): an unknown
// step type or property names the closest known one ("unknown step type 'sett': did you mean 'set'?"),
// a wrong type says what was wanted and what was given ("must be an object, not a number"), a missing
// property is called missing. Each error keeps the API's path; the console adds its line and column.
import type * as z from 'zod';
import type { FieldError } from '../errors.ts';

/** Levenshtein distance (insertions, deletions, substitutions), two rows at a time. */
export function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++)
      row[j] = Math.min((prev[j] as number) + 1, (row[j - 1] as number) + 1, (prev[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = row;
  }
  return prev[b.length] as number;
}

/**
 * The known name closest to `given` by edit distance, if close enough to be a slip: at most a third
 * of the longer name's letters (at least 1, at most 3) differ; ties go to the earlier name.
 */
export function closest(given: string, known: readonly string[]): string | undefined {
  let best: { name: string; d: number } | undefined;
  for (const name of known) {
    const d = editDistance(given.toLowerCase(), name.toLowerCase());
    if (!best || d < best.d) best = { name, d };
  }
  if (!best) return undefined;
  const allowed = Math.min(3, Math.max(1, Math.floor(Math.max(given.length, best.name.length) / 3)));
  return best.d <= allowed ? best.name : undefined;
}

const quoted = (names: readonly unknown[]) => names.map((n) => `'${String(n)}'`).join(', ');
const didYouMean = (given: string, known: readonly string[]) => {
  const near = closest(given, known);
  return near ? `: did you mean '${near}'?` : '';
};

/** A JSON value's kind in words: "a number", "a list", "null". */
function kindOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'an object';
  if (typeof v === 'boolean') return `${v}`;
  if (typeof v === 'string') return 'a string';
  if (typeof v === 'number') return Number.isInteger(v) ? 'a whole number' : 'a number';
  return typeof v;
}

const EXPECTED: Record<string, string> = {
  object: 'an object',
  record: 'an object',
  map: 'an object',
  array: 'a list (JSON array)',
  tuple: 'a list (JSON array)',
  string: 'a string',
  number: 'a number',
  int: 'a whole number',
  bigint: 'a whole number',
  boolean: 'true or false',
  null: 'null',
};

type Schema = z.core.$ZodType;
type Def = { type: string; [k: string]: unknown };
const defOf = (s: Schema) => (s as unknown as { _zod: { def: Def } })._zod.def;
const get = (v: unknown, k: PropertyKey) => (v !== null && typeof v === 'object' ? (v as Record<PropertyKey, unknown>)[k] : undefined);

/** Through wrappers (optional, default, pipe's input, lazy) to the schema that holds the shape. */
function unwrap(s: Schema | undefined, value: unknown): Schema | undefined {
  for (let n = 0; s && n < 20; n++) {
    const d = defOf(s);
    if (d.type === 'optional' || d.type === 'nullable' || d.type === 'default' || d.type === 'prefault' || d.type === 'readonly')
      s = d.innerType as Schema;
    else if (d.type === 'pipe') s = d.in as Schema;
    else if (d.type === 'lazy') s = (d.getter as () => Schema)();
    else if (d.type === 'union') {
      const key = d.discriminator as string | undefined;
      const options = d.options as Schema[];
      const pick = key
        ? options.find((o) => {
            const shape = (defOf(unwrap(o, value) ?? o).shape ?? {}) as Record<string, Schema>;
            const tag = shape[key] ? defOf(shape[key] as Schema) : undefined;
            return tag?.type === 'literal' && (tag.values as unknown[]).includes(get(value, key));
          })
        : undefined;
      if (!pick) return s;
      s = pick;
    } else return s;
  }
  return s;
}

/** The schema found at `path` in `root`, following `input` to choose among a union's options. */
function schemaAt(root: Schema, input: unknown, path: readonly PropertyKey[]): Schema | undefined {
  let s: Schema | undefined = unwrap(root, input);
  let v = input;
  for (const key of path) {
    if (!s) return undefined;
    const d = defOf(s);
    const next = get(v, key);
    if (d.type === 'object') s = (d.shape as Record<string, Schema>)[String(key)];
    else if (d.type === 'array') s = d.element as Schema;
    else if (d.type === 'record') s = d.valueType as Schema;
    else return undefined;
    v = next;
    s = unwrap(s, v);
  }
  return s;
}

/** The property names an object schema knows (none when it is not one). */
function keysOf(s: Schema | undefined): string[] {
  return s && defOf(s).type === 'object' ? Object.keys(defOf(s).shape as Record<string, Schema>) : [];
}

/** One zod issue in plain words (the path is the API's, joined by dots). */
function worded(root: Schema, input: unknown, issue: z.core.$ZodIssue): FieldError[] {
  const at = issue.path.map(String).join('.') || '(body)';
  const value = issue.path.reduce<unknown>((v, k) => get(v, k), input);
  const i = issue as z.core.$ZodIssue & Record<string, unknown>;
  switch (issue.code) {
    case 'unrecognized_keys': {
      const known = keysOf(schemaAt(root, input, issue.path)).filter((k) => get(value, k) === undefined);
      return issue.keys.map((k) => ({
        path: [...issue.path, k].map(String).join('.'),
        message: `unknown property '${k}'${didYouMean(k, known)}`,
      }));
    }
    case 'invalid_union': {
      const key = i.discriminator as string | undefined;
      const options = (i.options as unknown[] | undefined)?.map(String);
      if (!key || !options) break;
      const noun = key === 'type' ? 'step type' : `'${key}'`;
      if (value === undefined) return [{ path: at, message: `missing the ${noun}: one of ${quoted(options)}` }];
      if (typeof value !== 'string') return [{ path: at, message: `the ${noun} must be a string, one of ${quoted(options)}` }];
      const near = didYouMean(value, options);
      return [
        { path: at, message: near ? `unknown ${noun} '${value}'${near}` : `unknown ${noun} '${value}': use one of ${quoted(options)}` },
      ];
    }
    case 'invalid_type': {
      const wanted = EXPECTED[String(issue.expected)] ?? String(issue.expected);
      if (value === undefined) return [{ path: at, message: `is missing: it must be ${wanted}` }];
      return [{ path: at, message: `must be ${wanted}, not ${kindOf(value)}` }];
    }
    case 'invalid_value': {
      const allowed = issue.values.map(String);
      if (allowed.length === 1) return [{ path: at, message: `must be '${allowed[0]}'` }];
      const near = typeof value === 'string' ? didYouMean(value, allowed) : '';
      return [{ path: at, message: `'${String(value)}' is not one of ${quoted(allowed)}${near}` }];
    }
    case 'too_small':
    case 'too_big': {
      const n = Number(issue.code === 'too_small' ? issue.minimum : issue.maximum);
      const bound = issue.code === 'too_small' ? 'at least' : 'at most';
      if (issue.origin === 'array') return [{ path: at, message: `needs ${bound} ${n} ${n === 1 ? 'item' : 'items'}` }];
      if (issue.origin === 'string') return [{ path: at, message: `must be ${bound} ${n} ${n === 1 ? 'character' : 'characters'} long` }];
      if (issue.origin === 'number' || issue.origin === 'int') return [{ path: at, message: `must be ${bound} ${n}` }];
      break;
    }
  }
  return [{ path: at, message: issue.message }];
}

/** A refusal by `schema` of `input`, each issue in plain words (one entry per field, as the API lists them). */
export function wordedErrors(schema: Schema, input: unknown, error: z.ZodError): FieldError[] {
  return error.issues.flatMap((i) => {
    try {
      return worded(schema, input, i);
    } catch {
      // A schema shape this walker does not know: the schema's own words.
      return [{ path: i.path.map(String).join('.') || '(body)', message: i.message }];
    }
  });
}
