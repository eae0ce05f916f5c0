import * as z from 'zod';
import { badRequest, notFound, unsupportedMediaType, validationFailed, type FieldError } from '../../errors.ts';
import { MAX_JSON_DEPTH, tooDeep } from '../../json-depth.ts';
import { type IdKind, idKinds } from '../../schemas/common.ts';
import type { AppContext, Middleware, ProblemDoc } from '../context.ts';

export const isJsonContentType = (ct: string | undefined) =>
  ct === undefined || /^application\/([\w.-]+\+)?json\s*(;.*)?$/i.test(ct.trim());

/** One entry per field; an unknown key is named at its own path (`unrecognized key "secret"`). */
export const fieldErrors = (error: z.ZodError): FieldError[] =>
  error.issues.flatMap((i) =>
    i.code === 'unrecognized_keys'
      ? i.keys.map((k) => ({ path: [...i.path, k].map(String).join('.'), message: `unrecognized key "${k}"` }))
      : [{ path: i.path.map(String).join('.') || '(body)', message: i.message }],
  );

/**
 * Decode the raw body: an absent or empty body is `{}` (the spec's rule for triggers); else JSON
 * (400 `INVALID_JSON`), an object (400 `BODY_NOT_OBJECT`: every body of the API is one), nested at
 * most `MAX_JSON_DEPTH` deep (400 `VALIDATION_FAILED` with the path).
 */
export function parseJsonBody(body: string | undefined, isBase64Encoded: boolean): Record<string, unknown> {
  const text = body ? (isBase64Encoded ? Buffer.from(body, 'base64').toString('utf8') : body) : '';
  if (text.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw badRequest('INVALID_JSON', 'The body is not valid JSON.');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw badRequest('BODY_NOT_OBJECT', 'The body must be a JSON object.');
  const deep = tooDeep(value);
  if (deep !== undefined) throw validationFailed([{ path: deep, message: `nested deeper than ${MAX_JSON_DEPTH} levels` }]);
  return value as Record<string, unknown>;
}

type Schemas = { params?: z.ZodType; query?: z.ZodType; body?: z.ZodType };

/** The registered kind of the id at `path` in `schema` (through optional/default wrappers and into arrays), if any. */
function idKind(schema: z.ZodType, path: readonly PropertyKey[]): IdKind | undefined {
  const inner = (t: z.ZodType | undefined) => {
    let u = t as { _zod: { def: { innerType?: z.ZodType } } } | undefined;
    while (u?._zod.def.innerType) u = u._zod.def.innerType as never;
    return u as z.ZodType | undefined;
  };
  let at = inner(schema);
  for (const key of path) at = inner(at instanceof z.ZodObject ? at.shape[String(key)] : at instanceof z.ZodArray ? at.element : undefined);
  return at && idKinds.get(at);
}

/** What an unknown id of `kind` at `path` answers. */
function unknownId(kind: IdKind, path: readonly PropertyKey[], value: unknown) {
  const where = path.map(String).join('.');
  const detail = `${kind.noun} ${String(value ?? '').slice(0, 64)} does not exist.`;
  return kind.status === 404
    ? notFound(kind.code, detail)
    : badRequest(kind.code, `${where}: ${detail}`, [{ path: where, message: detail }]);
}

/** A path whose ids do not parse names nothing: the first bad id's kind answers, else a plain 404. */
function unknownPathId(schema: z.ZodType, given: Record<string, string | undefined>, error: z.ZodError) {
  const path = error.issues[0]?.path ?? [];
  const kind = idKind(schema, path);
  return kind ? unknownId(kind, path, given[String(path[0])]) : notFound();
}

/**
 * Refuse what `schema` refused in `input`. A malformed id is answered as an unknown one of its kind
 * (`idOf`: 404 `WEBHOOK_NOT_FOUND`, 400 `INVALID_API_KEY_BINDING`...), once nothing else is wrong.
 */
function refusal(schema: z.ZodType, input: unknown, error: z.ZodError) {
  // A malformed id: a string refused for its shape (a missing id, one of another type, or a rule across fields is a validation failure).
  const at = (path: readonly PropertyKey[]) => path.reduce<unknown>((v, k) => (v as Record<PropertyKey, unknown>)?.[k], input);
  const malformedId = (i: z.core.$ZodIssue) =>
    i.code !== 'custom' && typeof at(i.path) === 'string' && idKind(schema, i.path) !== undefined;
  const first = error.issues[0];
  if (!first || !error.issues.every(malformedId)) return validationFailed(fieldErrors(error));
  return unknownId(idKind(schema, first.path) as IdKind, first.path, at(first.path));
}

/** Every id kind registered inside `schema` (through wrappers, objects, arrays, records, unions). */
export function idKindsIn(schema: z.ZodType | undefined, seen = new Set<unknown>()): IdKind[] {
  if (!schema || seen.has(schema)) return [];
  seen.add(schema);
  const own = idKinds.get(schema);
  if (own) return [own];
  const def = (schema as unknown as { _zod: { def: Record<string, unknown> } })._zod.def;
  const children = [
    ...Object.values((def.shape as Record<string, z.ZodType> | undefined) ?? {}),
    ...((def.options as z.ZodType[] | undefined) ?? []),
    ...[def.innerType, def.element, def.valueType, def.in, def.out, def.left, def.right].filter(Boolean),
  ] as z.ZodType[];
  return children.flatMap((c) => idKindsIn(c, seen));
}

/** What `parseRequest(schemas)` can refuse with: an unknown (or malformed) id's code, validation, the body's media type and JSON. */
function parseProblems(schemas: Schemas): ProblemDoc[] {
  const ids = (s: z.ZodType | undefined) => idKindsIn(s).map((k) => ({ status: k.status, code: k.code }));
  return [
    ...(schemas.params ? [...ids(schemas.params), { status: 404, code: 'NOT_FOUND' }] : []),
    ...(schemas.query ? [{ status: 400, code: 'VALIDATION_FAILED' }] : []),
    ...(schemas.body
      ? [
          { status: 415, code: 'UNSUPPORTED_MEDIA_TYPE' },
          { status: 400, code: 'INVALID_JSON' },
          { status: 400, code: 'BODY_NOT_OBJECT' },
          { status: 400, code: 'VALIDATION_FAILED' },
          ...ids(schemas.body),
        ]
      : []),
  ];
}

/**
 * Validate path parameters (a malformed id is its kind's 404: it cannot exist), the query (400) and the JSON body
 * (415 for a non-JSON content type, 400 `INVALID_JSON`, 400 `VALIDATION_FAILED` with `errors[]`).
 * middy's JSON parser answers 415/422 for malformed JSON and rejects empty bodies; the contract
 * needs these codes instead.
 */
export const parseRequest = (schemas: Schemas): Middleware => ({
  problems: parseProblems(schemas),
  before: async ({ event, context }) => {
    const app = (context as AppContext).app;
    if (schemas.params) {
      const given = event.pathParameters ?? {};
      const r = schemas.params.safeParse(given);
      if (!r.success) throw unknownPathId(schemas.params, given, r.error);
      app.params = r.data;
    }
    if (schemas.query) {
      const r = schemas.query.safeParse(event.queryStringParameters ?? {});
      if (!r.success) throw validationFailed(fieldErrors(r.error));
      app.query = r.data;
    }
    if (schemas.body) {
      if (!isJsonContentType(event.headers['content-type'])) throw unsupportedMediaType();
      const given = parseJsonBody(event.body, event.isBase64Encoded);
      const r = schemas.body.safeParse(given);
      if (!r.success) throw refusal(schemas.body, given, r.error);
      app.body = r.data;
    }
  },
});
