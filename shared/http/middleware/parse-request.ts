import type { z } from 'zod';
import { badRequest, notFound, unsupportedMediaType, validationFailed, type FieldError } from '../../errors.ts';
import { MAX_JSON_DEPTH, tooDeep } from '../../json-depth.ts';
import type { AppContext, Middleware } from '../context.ts';

export const isJsonContentType = (ct: string | undefined) =>
  ct === undefined || /^application\/([\w.-]+\+)?json\s*(;.*)?$/i.test(ct.trim());

export const fieldErrors = (error: z.ZodError): FieldError[] =>
  error.issues.map((i) => ({ path: i.path.map(String).join('.') || '(body)', message: i.message }));

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

/**
 * Validate path parameters (a malformed id is 404: it cannot exist), the query (400) and the JSON body
 * (415 for a non-JSON content type, 400 `INVALID_JSON`, 400 `VALIDATION_FAILED` with `errors[]`).
 * middy's JSON parser answers 415/422 for malformed JSON and rejects empty bodies; the contract
 * needs these codes instead.
 */
export const parseRequest = (schemas: Schemas): Middleware => ({
  before: async ({ event, context }) => {
    const app = (context as AppContext).app;
    if (schemas.params) {
      const r = schemas.params.safeParse(event.pathParameters ?? {});
      if (!r.success) throw notFound();
      app.params = r.data;
    }
    if (schemas.query) {
      const r = schemas.query.safeParse(event.queryStringParameters ?? {});
      if (!r.success) throw validationFailed(fieldErrors(r.error));
      app.query = r.data;
    }
    if (schemas.body) {
      if (!isJsonContentType(event.headers['content-type'])) throw unsupportedMediaType();
      const r = schemas.body.safeParse(parseJsonBody(event.body, event.isBase64Encoded));
      if (!r.success) throw validationFailed(fieldErrors(r.error));
      app.body = r.data;
    }
  },
});
