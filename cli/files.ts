// A folder of workflow files (docs/workflows-as-code.md), read and checked offline with the server's own
// schemas: each error as `file:line:column path message`.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import { findNodeAtLocation, type ParseError, parse, parseTree, printParseErrorCode } from 'jsonc-parser';
import { fieldErrors } from '../shared/http/middleware/parse-request.ts';
import { MAX_JSON_DEPTH, tooDeep } from '../shared/json-depth.ts';
import { WorkflowFile } from '../shared/schemas/workflow-file.ts';

export type FileError = { file: string; line: number; column: number; path: string; message: string };
/** A valid file: where it is, what it says (as written: `raw`) and as parsed. */
export type LoadedFile = { file: string; raw: Record<string, unknown>; workflow: WorkflowFile };
export type Loaded = { files: LoadedFile[]; errors: FileError[] };

/** Workflow files: `*.json` in a folder (not `*.test.json`, not below it), or the files named. */
export function workflowPaths(targets: readonly string[]): string[] {
  return targets.flatMap((t) =>
    statSync(t).isDirectory()
      ? readdirSync(t)
          .filter((n) => n.endsWith('.json') && !n.endsWith('.test.json'))
          .sort()
          .map((n) => join(t, n))
      : [t],
  );
}

/** 1-based line and column of `offset` in `text`. */
function place(text: string, offset: number) {
  const before = text.slice(0, offset);
  return { line: before.split('\n').length, column: offset - before.lastIndexOf('\n') };
}

/** Where the value at `path` (`definition.steps.0.next`) is, or the nearest enclosing value that exists. */
function placeOf(text: string, root: ReturnType<typeof parseTree>, path: string) {
  const segments = path === '(body)' ? [] : path.split('.').map((s) => (/^\d+$/.test(s) ? Number(s) : s));
  for (let n = segments.length; root && n >= 0; n--) {
    const node = findNodeAtLocation(root, segments.slice(0, n));
    if (node) return place(text, node.parent?.type === 'property' ? node.parent.offset : node.offset);
  }
  return { line: 1, column: 1 };
}

/** `CloseBraceExpected` as words. */
const words = (code: string) => code.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase();

/** One file, checked as the server checks a workflow (schema and cross-field rules), and named by its key. */
export function checkFile(file: string, text: string): { workflow?: WorkflowFile; raw?: Record<string, unknown>; errors: FileError[] } {
  const at = (path: string, message: string, where = { line: 1, column: 1 }): FileError => ({ file, ...where, path, message });
  const syntax: ParseError[] = [];
  parse(text, syntax, { disallowComments: true, allowTrailingComma: false, allowEmptyContent: false });
  const first = syntax[0];
  if (first) return { errors: [at('(file)', `JSON syntax error: ${words(printParseErrorCode(first.error))}`, place(text, first.offset))] };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    return { errors: [at('(file)', `JSON syntax error: ${(e as Error).message}`)] };
  }
  const deep = tooDeep(value);
  if (deep !== undefined) return { errors: [at(deep, `nested deeper than ${MAX_JSON_DEPTH} levels`)] };
  const parsed = WorkflowFile.safeParse(value);
  const root = parseTree(text);
  const errors = parsed.success ? [] : fieldErrors(parsed.error).map((e) => at(e.path, e.message, placeOf(text, root, e.path)));
  if (parsed.success && basename(file) !== `${parsed.data.key}.json`)
    errors.push(
      at(
        'key',
        `must be the file's name without .json ("${basename(file, '.json')}"), or the file renamed to ${parsed.data.key}.json`,
        placeOf(text, root, 'key'),
      ),
    );
  return parsed.success && errors.length === 0 ? { workflow: parsed.data, raw: value as Record<string, unknown>, errors } : { errors };
}

/** Every file of the targets, checked; a key in two files is an error in the second. */
export function loadWorkflows(targets: readonly string[], cwd = process.cwd()): Loaded {
  const files: LoadedFile[] = [];
  const errors: FileError[] = [];
  const seen = new Map<string, string>();
  for (const path of workflowPaths(targets)) {
    const file = relative(cwd, path) || path;
    const text = readFileSync(path, 'utf8');
    const checked = checkFile(file, text);
    errors.push(...checked.errors);
    if (!checked.workflow) continue;
    const other = seen.get(checked.workflow.key);
    if (other) errors.push({ file, line: 1, column: 1, path: 'key', message: `the key ${checked.workflow.key} is also ${other}'s` });
    else {
      seen.set(checked.workflow.key, file);
      files.push({ file, raw: checked.raw ?? {}, workflow: checked.workflow });
    }
  }
  return { files, errors };
}

export const formatError = (e: FileError) => `${e.file}:${e.line}:${e.column} ${e.path} ${e.message}`;
