// What the definition's JSON Schema (schemas/workflow.schema.json, generated from the server's own zod
// schemas) says at a place in a draft: the properties an object may have, the values a property may
// take (the step `type`s), and a line about a property for a hover. Pure functions over the schema, no
// DOM: the editor's script (./main.ts) finds the place in its syntax tree; test/unit tests these.

export type JsonSchema = {
  $ref?: string;
  type?: string | string[];
  title?: string;
  description?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
  oneOf?: JsonSchema[];
  anyOf?: JsonSchema[];
  enum?: unknown[];
  const?: unknown;
  default?: unknown;
};

export type SchemaDocument = JsonSchema & { $defs?: Record<string, JsonSchema> };

/**
 * One level on the way from the definition to a place: into an object's property (`key`, and the
 * object's own `type` value, which picks a step's schema) or into a list's items.
 */
export type Segment = { key: string; tag?: string | undefined } | { item: true };

const deref = (doc: SchemaDocument, s: JsonSchema | undefined): JsonSchema | undefined => {
  for (let n = 0; s?.$ref && n < 10; n++) s = doc.$defs?.[s.$ref.replace('#/$defs/', '')];
  return s;
};

/** The options of a `oneOf`/`anyOf` (dereferenced), or the schema alone. */
const options = (doc: SchemaDocument, s: JsonSchema | undefined): JsonSchema[] => {
  const d = deref(doc, s);
  if (!d) return [];
  const alts = d.oneOf ?? d.anyOf;
  return alts ? alts.flatMap((a) => options(doc, a)) : [d];
};

/** The object schema among `s`'s options whose `type` property is `tag` (a step's), or the only object one. */
export function objectSchema(doc: SchemaDocument, s: JsonSchema | undefined, tag?: string): JsonSchema | undefined {
  const objects = options(doc, s).filter((o) => o.properties);
  if (objects.length <= 1) return objects[0];
  return objects.find((o) => tag !== undefined && o.properties?.type?.const === tag);
}

/** The schema at the end of `path`, starting from the definition (`$defs.WorkflowDefinition`). */
export function schemaAt(doc: SchemaDocument, path: readonly Segment[]): JsonSchema | undefined {
  let s: JsonSchema | undefined = doc.$defs?.WorkflowDefinition;
  for (const seg of path) {
    if ('item' in seg) {
      s = options(doc, s).find((o) => o.items)?.items;
      continue;
    }
    const obj = objectSchema(doc, s, seg.tag);
    const next: JsonSchema | boolean | undefined =
      obj?.properties?.[seg.key] ?? options(doc, s).find((o) => typeof o.additionalProperties === 'object')?.additionalProperties;
    s = typeof next === 'object' ? next : undefined;
  }
  return deref(doc, s);
}

/** The values a place may take that can be listed: its `enum` or `const` strings, over every option. */
export function valuesAt(doc: SchemaDocument, path: readonly Segment[]): string[] {
  const last = path.at(-1);
  // A step's `type`: every step's const (the place's own schema is one step's, chosen by that very value).
  if (last && 'key' in last) {
    const parent = schemaAt(doc, path.slice(0, -1));
    const consts = options(doc, parent)
      .map((o) => deref(doc, o.properties?.[last.key])?.const)
      .filter((c): c is string => typeof c === 'string');
    if (consts.length > 1) return consts;
  }
  return [
    ...new Set(options(doc, schemaAt(doc, path)).flatMap((o) => [...(o.enum ?? []), ...(o.const === undefined ? [] : [o.const])])),
  ].filter((v): v is string => typeof v === 'string');
}

/** The properties the object at `path` may have (its `type` value `tag` picks a step's), required ones first. */
export function propertiesAt(
  doc: SchemaDocument,
  path: readonly Segment[],
  tag?: string,
): { name: string; required: boolean; schema: JsonSchema }[] {
  const obj = objectSchema(doc, schemaAt(doc, path), tag);
  if (!obj?.properties) {
    // A step whose type is not written yet: the properties every step has.
    const steps = options(doc, schemaAt(doc, path)).filter((o) => o.properties);
    if (steps.length < 2) return [];
    const common = Object.keys(steps[0]?.properties ?? {}).filter((k) => steps.every((o) => o.properties?.[k]));
    return common.map((name) => ({
      name,
      required: steps.every((o) => o.required?.includes(name)),
      schema: steps[0]?.properties?.[name] as JsonSchema,
    }));
  }
  const list = Object.entries(obj.properties).map(([name, schema]) => ({ name, required: obj.required?.includes(name) ?? false, schema }));
  return [...list.filter((p) => p.required), ...list.filter((p) => !p.required)];
}

/** A schema's kind in words: "a string", "one of 'fail', 'continue'", "true or false or a string". */
export function kindOf(doc: SchemaDocument, s: JsonSchema | undefined): string {
  const kinds = options(doc, s).map((o) => {
    if (o.const !== undefined) return `'${String(o.const)}'`;
    if (o.enum) return `one of ${o.enum.map((v) => `'${String(v)}'`).join(', ')}`;
    const t = Array.isArray(o.type) ? o.type[0] : o.type;
    if (t === 'object') return 'an object';
    if (t === 'array') return 'a list';
    if (t === 'integer') return 'a whole number';
    if (t === 'boolean') return 'true or false';
    if (t === 'string') return o.description?.includes('expression') ? 'an expression "{% … %}"' : 'a string';
    if (t === 'number') return 'a number';
    return o.description ?? 'any JSON value';
  });
  return [...new Set(kinds)].join(' or ') || 'any JSON value';
}

/** The hover's line about property `key` of the object at `path`: "values (required in a set step): an object". */
export function describeProperty(doc: SchemaDocument, path: readonly Segment[], key: string, tag?: string): string | undefined {
  const obj = objectSchema(doc, schemaAt(doc, path), tag);
  const prop = obj?.properties?.[key];
  if (!obj || !prop) return undefined;
  const where = obj.title ? ` in ${obj.title.replace(/^A /, 'a ')}` : '';
  const required = obj.required?.includes(key) ? `required${where}` : `optional${where}`;
  const d = deref(doc, prop);
  const note = d?.description && !d.description.startsWith('Any JSON') ? `. ${d.description}` : '';
  const dflt = d?.default !== undefined ? ` (default ${JSON.stringify(d.default)})` : '';
  return `${key} (${required}): ${kindOf(doc, prop)}${dflt}${note}`;
}
