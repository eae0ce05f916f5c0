// `flowgate test`: every `*.test.json` beside the workflow files, run on the server with its mocks
// (`POST /api/workflows/test`: the engine in memory, nothing written or sent), its expectations checked.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { fieldErrors } from '../shared/http/middleware/parse-request.ts';
import { WorkflowTestFile } from '../shared/schemas/workflow-tests.ts';
import type { LoadedFile } from './files.ts';
import { CliError, call, type Session } from './session.ts';

type Result = {
  status: string;
  output: unknown;
  error: { code: string; message: string } | null;
  path: string[];
};

/** Test files: `*.test.json` in each folder named (not below it), or the files named. */
export function testPaths(targets: readonly string[]): string[] {
  return targets.flatMap((t) =>
    statSync(t).isDirectory()
      ? readdirSync(t)
          .filter((n) => n.endsWith('.test.json'))
          .sort()
          .map((n) => join(t, n))
      : t.endsWith('.test.json')
        ? [t]
        : [],
  );
}

const show = (v: unknown) => (v === undefined ? 'nothing' : JSON.stringify(v));
const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * The first place where `actual` differs from `expected`, as `where: expected …, got …`; undefined when
 * it matches. Objects match as a subset (the keys `expected` has, recursively); arrays element by element
 * and of the same length; anything else exactly.
 */
export function firstDifference(expected: unknown, actual: unknown, where: string): string | undefined {
  const differs = () => `${where}: expected ${show(expected)}, got ${show(actual)}`;
  if (isObject(expected)) {
    if (!isObject(actual)) return differs();
    for (const [k, v] of Object.entries(expected)) {
      const d = firstDifference(v, actual[k], `${where}.${k}`);
      if (d) return d;
    }
    return undefined;
  }
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) return differs();
    for (let i = 0; i < Math.max(expected.length, actual.length); i++) {
      if (i >= expected.length || i >= actual.length) return `${where}[${i}]: expected ${show(expected[i])}, got ${show(actual[i])}`;
      const d = firstDifference(expected[i], actual[i], `${where}[${i}]`);
      if (d) return d;
    }
    return undefined;
  }
  return isDeepStrictEqual(expected, actual) ? undefined : differs();
}

/** The first expectation the result does not meet (status, then path, then error, then output). */
function unmet(expect: WorkflowTestFile['expect'], r: Result): string | undefined {
  const because = r.error ? ` (${r.error.code}: ${r.error.message})` : '';
  if (expect.status !== undefined && expect.status !== r.status)
    return `status: expected ${show(expect.status)}, got ${show(r.status)}${because}`;
  if (expect.path) {
    const d = firstDifference(expect.path, r.path, 'path');
    if (d) return `${d}${because}`;
  }
  if (expect.error) {
    const d = firstDifference(expect.error, r.error, 'error');
    if (d) return d;
  }
  return 'output' in expect ? firstDifference(expect.output, r.output, 'output') : undefined;
}

/** One test file: its outcome line, and whether it passed. */
async function runOne(session: Session, path: string, workflows: readonly LoadedFile[]): Promise<{ line: string; passed: boolean }> {
  const file = relative(process.cwd(), path) || path;
  const fail = (why: string) => ({ line: `FAIL ${file}: ${why}`, passed: false });
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(path, 'utf8'));
  } catch (e) {
    return fail(`not JSON: ${(e as Error).message}`);
  }
  const parsed = WorkflowTestFile.safeParse(value);
  if (!parsed.success)
    return fail(
      fieldErrors(parsed.error)
        .map((e) => `${e.path} ${e.message}`)
        .join('; '),
    );
  const t = parsed.data;
  const workflow = workflows.find((w) => w.workflow.key === t.workflow);
  if (!workflow) return fail(`workflow: no workflow file of the folder has the key ${t.workflow}`);
  let result: Result;
  try {
    const body = { definition: workflow.raw.definition, input: t.input, mocks: t.mocks };
    result = (await call(session, 'POST', '/api/workflows/test', body)) as Result;
  } catch (e) {
    if (!(e instanceof CliError)) throw e;
    return fail(e.message);
  }
  const why = unmet(t.expect, result);
  if (why) return fail(why);
  return { line: `PASS ${file} (${t.workflow}: ${result.status}, ${result.path.join(' → ')})`, passed: true };
}

/** Run every test file of the targets against the folder's workflow files; the lines to print and how many failed. */
export async function runTests(session: Session, targets: readonly string[], workflows: readonly LoadedFile[]) {
  const paths = testPaths(targets);
  const lines: string[] = [];
  let failed = 0;
  for (const path of paths) {
    const r = await runOne(session, path, workflows);
    lines.push(r.line);
    if (!r.passed) failed++;
  }
  lines.push(`${paths.length} test file(s): ${paths.length - failed} passed, ${failed} failed`);
  return { lines, failed };
}
