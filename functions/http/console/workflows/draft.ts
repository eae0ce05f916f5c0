// The editor's draft (a name and a definition's JSON text) checked as the API checks a workflow: the
// same body schema (`WorkflowBody`, so each error's path is the API's, less the `definition.` prefix),
// then the same checks a save makes (quorums, channels, secrets), saving nothing. The schema's refusals
// are worded for people (shared/schemas/wording.ts: "unknown step type 'sett': did you mean 'set'?");
// each definition error carries the line and column of the draft it points at.
import { createHash } from 'node:crypto';
import { findNodeAtLocation, type ParseError, parse, parseTree, printParseErrorCode } from 'jsonc-parser';
import type * as z from 'zod';
import { checkDefinition } from '../../../../shared/domain/workflows.ts';
import type { Actor } from '../../../../shared/domain/workflow-access.ts';
import type { WorkflowDefinition } from '../../../../shared/engine/definition.ts';
import { AppError, type FieldError, forbidden } from '../../../../shared/errors.ts';
import { MAX_JSON_DEPTH, tooDeep } from '../../../../shared/json-depth.ts';
import { WorkflowBody } from '../../../../shared/schemas/workflows.ts';
import { wordedErrors } from '../../../../shared/schemas/wording.ts';
import { DEFINITION_BYTES } from '../../../route-kinds.ts';

export type DraftError = {
  field: 'name' | 'definition' | 'form';
  /** The path as the API names it, relative to the definition (`steps.0.type`); `(definition)` for the whole. */
  path: string;
  message: string;
  /** Where in the draft's text (1-based), when it points at a place there. */
  line?: number;
  column?: number;
};

export type Draft = { name: string; text: string };
export type Checked =
  | { ok: true; name: string; definition: WorkflowDefinition }
  /** `definition`: the draft when its schema holds (its graph can be drawn), even if a save's checks refuse it. */
  | { ok: false; errors: DraftError[]; definition?: WorkflowDefinition };

/** A member who may not edit the workflow: the API's 403. */
export const notEditor = () => forbidden('NOT_WORKFLOW_EDITOR', 'Only the owner, editors and admins may change this workflow.');

/** The draft from a form's fields (absent ones are empty). */
export const draftOf = (form: URLSearchParams): Draft => ({ name: form.get('name') ?? '', text: form.get('definition') ?? '' });

/**
 * The field a shown test run carries (a hidden input in its result): a digest of the draft text it ran.
 * The live check of that same text changes nothing on the page (it would wipe the result), so it answers
 * 204 and htmx leaves the page as it is; a check of other text replaces the result, which no longer holds.
 */
export const TESTED_FIELD = 'tested';
export const testedDigest = (text: string) => createHash('sha256').update(text).digest('base64url');
export const showsTestOf = (form: URLSearchParams) => form.get(TESTED_FIELD) === testedDigest(draftOf(form).text);

/** The version the editor was opened on (a hidden field); absent or malformed: none expected. */
export const expectedOf = (form: URLSearchParams) => {
  const v = Number(form.get('version'));
  return Number.isSafeInteger(v) && v >= 1 ? v : undefined;
};

/** 1-based line and column of `offset` in `text`. */
function place(text: string, offset: number) {
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  return { line, column: offset - before.lastIndexOf('\n') };
}

/** The line and column of the value at `path` (`steps.0.type`: of its property), or of the nearest enclosing value that exists. */
function placeOf(text: string, root: ReturnType<typeof parseTree>, path: string) {
  if (!root) return undefined;
  const segments: (string | number)[] = path === '(definition)' ? [] : path.split('.').map((s) => (/^\d+$/.test(s) ? Number(s) : s));
  for (let n = segments.length; n >= 0; n--) {
    const node = findNodeAtLocation(root, segments.slice(0, n));
    if (node) return place(text, node.parent?.type === 'property' ? node.parent.offset : node.offset);
  }
  return undefined;
}

/** `CloseBraceExpected` as words: "close brace expected". */
const words = (code: string) => code.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase();

/**
 * Where the text first nests deeper than `MAX_JSON_DEPTH` (brackets outside strings), if it does: such a
 * text is refused before any parser walks it (a recursive one would overflow the stack).
 */
function tooDeepAt(text: string): number | undefined {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{' || c === '[') {
      if (++depth > MAX_JSON_DEPTH) return i;
    } else if (c === '}' || c === ']') depth--;
  }
  return undefined;
}

/** The text as JSON: the first syntax error with its line and column, or the value. */
function parseText(text: string): { value: unknown } | { error: DraftError } {
  if (text.trim() === '')
    return { error: { field: 'definition', path: '(definition)', message: 'is empty: write the definition as JSON' } };
  const deep = tooDeepAt(text);
  if (deep !== undefined)
    return {
      error: { field: 'definition', path: '(definition)', message: `nested deeper than ${MAX_JSON_DEPTH} levels`, ...place(text, deep) },
    };
  const errors: ParseError[] = [];
  parse(text, errors, { disallowComments: true, allowTrailingComma: false, allowEmptyContent: false });
  const first = errors[0];
  if (first) {
    const at = place(text, first.offset);
    return {
      error: {
        field: 'definition',
        path: '(definition)',
        message: `JSON syntax error: ${words(printParseErrorCode(first.error))}`,
        ...at,
      },
    };
  }
  try {
    // What the API's JSON parser takes, exactly (the tolerant parser above only finds where it breaks).
    return { value: JSON.parse(text) };
  } catch (e) {
    return { error: { field: 'definition', path: '(definition)', message: `JSON syntax error: ${(e as Error).message}` } };
  }
}

/** A field error of the API (`definition.steps.0.type`, `name`) as one of the draft's. */
function fromApi(text: string, root: ReturnType<typeof parseTree>, e: FieldError): DraftError {
  if (e.path === 'name') return { field: 'name', path: 'name', message: e.message };
  if (e.path === 'definition' || e.path.startsWith('definition.')) {
    const path = e.path === 'definition' ? '(definition)' : e.path.slice('definition.'.length);
    return { field: 'definition', path, message: e.message, ...placeOf(text, root, path) };
  }
  return { field: 'form', path: e.path, message: e.message };
}

/** A refusal of the domain's (a save's checks, a conflict) as the draft's errors; anything else is thrown on. */
export function refusalErrors(text: string, error: unknown): DraftError[] {
  if (!(error instanceof AppError) || error.kind === 'internal' || error.kind === 'not_found') throw error;
  const listed = (error.extra.body?.errors ?? []) as FieldError[];
  const root = listed.length ? parseTree(text) : undefined;
  return listed.length ? listed.map((e) => fromApi(text, root, e)) : [{ field: 'form', path: error.code, message: error.message }];
}

/** Checks the draft as a save would (`current`: the definition saved now, whose masked secrets a draft keeps). */
export async function checkDraft(p: Actor, draft: Draft, current: WorkflowDefinition | undefined): Promise<Checked> {
  const { text } = draft;
  if (Buffer.byteLength(text) > DEFINITION_BYTES)
    return { ok: false, errors: [{ field: 'definition', path: '(definition)', message: `is larger than ${DEFINITION_BYTES / 1024} KiB` }] };
  const parsed = parseText(text);
  if ('error' in parsed) {
    const name = WorkflowBody.shape.name.safeParse(draft.name);
    const nameErrors: DraftError[] = name.success
      ? []
      : [{ field: 'name', path: 'name', message: name.error.issues[0]?.message ?? 'invalid' }];
    return { ok: false, errors: [...nameErrors, parsed.error] };
  }
  const deep = tooDeep(parsed.value);
  if (deep !== undefined)
    return { ok: false, errors: [{ field: 'definition', path: deep, message: `nested deeper than ${MAX_JSON_DEPTH} levels` }] };
  const body = WorkflowBody.safeParse({ name: draft.name, definition: parsed.value });
  const root = parseTree(text);
  if (!body.success) {
    const errors = wordedErrors(WorkflowBody, { name: draft.name, definition: parsed.value }, body.error as z.ZodError).map((e) =>
      fromApi(text, root, e),
    );
    const definition = WorkflowBody.shape.definition.safeParse(parsed.value);
    return { ok: false, errors, ...(definition.success ? { definition: definition.data } : {}) };
  }
  const definition = body.data.definition;
  try {
    await checkDefinition(p, definition, current);
  } catch (e) {
    return { ok: false, errors: refusalErrors(text, e), definition };
  }
  return { ok: true, name: body.data.name, definition };
}
