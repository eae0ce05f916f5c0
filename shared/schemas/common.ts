import * as z from 'zod';

export const Problem = z
  .object({
    type: z.string(),
    title: z.string(),
    status: z.number().int(),
    code: z.string(),
    detail: z.string().optional(),
    requestId: z.string(),
    errors: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
  })
  .meta({ id: 'Problem', description: 'RFC 9457 problem details with a stable `code`.' });

/**
 * Schemas the OpenAPI document describes by what a client sends rather than by their zod form: a path
 * segment taken as any text (so that anything else answers as unknown, in order) documented as the
 * number it names. The generator (shared/http/openapi.ts) puts this JSON Schema in its place.
 */
export const documentedAs = z.registry<Record<string, unknown>>();

const ID = /^[a-z]{2,3}_[0-9a-z]{26}$|^[0-9a-z]{26}$/;
/** Ids: opaque, bounded, no separators. */
export const Id = z.string().regex(ID);

/** What an id of each kind answers when nothing has it (404 in a path, 404 or 400 in a body): a
 * malformed id gets exactly this too (`parseRequest`), since a caller cannot know our id format and
 * keys its handling on `code`. */
export type IdKind = { code: string; noun: string; status: 400 | 404 };
export const idKinds = z.registry<IdKind>();
/** An id of one kind: `idOf('WEBHOOK_NOT_FOUND', 'Webhook')`. */
export const idOf = (code: string, noun: string, opts: { status?: 400 | 404; pattern?: RegExp } = {}) =>
  z
    .string()
    .regex(opts.pattern ?? ID)
    .register(idKinds, { code, noun, status: opts.status ?? 404 });

export const Health = z.object({
  status: z.literal('ok'),
  time: z.number(),
  faults: z
    .record(z.string(), z.number().int().min(0))
    .optional()
    .describe('Local stack only, while `FAULTS` is set: the faults injected so far, by kind (docs/local-mode.md)'),
});
