import type * as z from 'zod';
import { compileExpression, ExpressionError, findExpressions, type Path } from './expressions.ts';
import { SECRET_NAME_MESSAGE, secretRefs } from './secret-refs.ts';
import { END, MAX_JSON_DEPTH, TARGET } from './steps/common.ts';
import { isContainerType, moduleOf } from './steps/index.ts';
import type { Issue } from './steps/types.ts';

/**
 * The checks of a definition that need more than one field (docs/workflows.md): step ids, targets, each
 * step module's own (`issues`, `targets`), every expression, and where `$secrets` may be read. They
 * run on the raw value, even when other fields failed, so every fault is reported at its path.
 */

const record = (v: unknown): Record<string, unknown> => (v !== null && typeof v === 'object' ? (v as Record<string, unknown>) : {});

/** A list of steps: the definition's, or a container's (`container`: its type). */
type StepList = { path: (string | number)[]; steps: unknown[]; container?: string };

/** The definition's steps and every container's nested ones. */
function stepLists(steps: unknown[]): StepList[] {
  const lists: StepList[] = [{ path: ['steps'], steps }];
  steps.forEach((s, i) => {
    const { type, steps: nested } = record(s);
    if (isContainerType(type) && Array.isArray(nested))
      lists.push({ path: ['steps', i, 'steps'], steps: nested, container: type as string });
  });
  return lists;
}

/**
 * Step ids unique in the whole definition (nested steps included), and every `next`, `onError.next`
 * and further target (a switch's) naming a step of the same list (a nested step's: one of its
 * siblings) or `"$end"`; no container inside a container.
 */
function flowIssues(steps: unknown[]): Issue[] {
  const issues: Issue[] = [];
  const seen = new Map<string, string>();
  const lists = stepLists(steps);
  for (const list of lists) {
    list.steps.forEach((s, i) => {
      const id = record(s).id;
      if (typeof id !== 'string') return;
      const where = [...list.path, i].join('.');
      const first = seen.get(id);
      if (first === undefined) seen.set(id, where);
      else issues.push({ path: [...list.path, i, 'id'], message: `duplicate step id "${id}" (also ${first}.id)` });
    });
  }
  for (const list of lists) {
    const ids = new Set(list.steps.map((s) => record(s).id).filter((id) => typeof id === 'string'));
    const check = (target: unknown, path: (string | number)[]) => {
      // A malformed target is the schema's to report.
      if (typeof target === 'string' && TARGET.test(target) && target !== END && !ids.has(target))
        issues.push({
          path,
          message: `no step "${target}"${list.container ? ` in this ${list.container}` : ''} (a target must be a step of the same list or "$end")`,
        });
    };
    list.steps.forEach((s, i) => {
      const at = [...list.path, i];
      const step = record(s);
      check(step.next, [...at, 'next']);
      check(record(step.onError).next, [...at, 'onError', 'next']);
      for (const { target, path } of moduleOf(step.type)?.targets?.(step) ?? []) check(target, [...at, ...path]);
      if (list.container && isContainerType(step.type))
        issues.push({ path: [...at, 'type'], message: `a ${list.container} cannot contain a ${step.type as string}` });
    });
  }
  return issues;
}

/** A step module's own checks of a raw step at `at`. */
const stepIssues = (s: unknown, at: (string | number)[]): Issue[] =>
  (moduleOf(record(s).type)?.issues?.(record(s)) ?? []).map((issue) => ({ ...issue, path: [...at, ...issue.path] }));

/** Step modules' own checks, unique step ids and targets, every expression compiles, `$secrets` only where it may go. */
export function crossCheck(def: unknown, ctx: z.RefinementCtx) {
  const steps = (def as { steps?: unknown } | null)?.steps;
  if (Array.isArray(steps)) {
    steps.forEach((s: unknown, i) => {
      for (const issue of stepIssues(s, ['steps', i])) ctx.addIssue({ code: 'custom', ...issue });
      const nested = record(s).steps;
      if (isContainerType(record(s).type) && Array.isArray(nested))
        nested.forEach((n: unknown, j) => {
          for (const issue of stepIssues(n, ['steps', i, 'steps', j])) ctx.addIssue({ code: 'custom', ...issue });
        });
    });
    for (const issue of flowIssues(steps)) ctx.addIssue({ code: 'custom', ...issue });
  }
  // Deeper literal JSON is refused by JsonValue anyway.
  for (const { path, source } of findExpressions(def, [], MAX_JSON_DEPTH + 8)) {
    try {
      compileExpression(source);
    } catch (e) {
      ctx.addIssue({ code: 'custom', path, message: e instanceof ExpressionError ? e.message : 'invalid expression' });
    }
  }
  for (const issue of secretIssues(def, MAX_JSON_DEPTH + 8)) ctx.addIssue({ code: 'custom', ...issue });
}

/** Where `$secrets` may appear in a step, below its path: its request's url, headers, body (`request` of its module); a container's nested steps'. */
function allowedInStep(step: unknown, rest: Path): boolean {
  const { type, steps } = record(step);
  if (isContainerType(type) && rest[0] === 'steps' && typeof rest[1] === 'number')
    return allowedInStep(Array.isArray(steps) ? steps[rest[1]] : undefined, rest.slice(2));
  const request = moduleOf(type)?.request;
  if (!request?.every((k, i) => rest[i] === k)) return false;
  return ['url', 'headers', 'body'].includes(rest[request.length] as string);
}

/** Where `$secrets` may appear: a step's request's url, headers, body; a notification's secret. */
function allowedAt(def: unknown, path: Path): boolean {
  const [section, index, field] = path;
  if (section === 'notifications') return field === 'secret' && path.length === 3;
  if (section !== 'steps' || typeof index !== 'number') return false;
  return allowedInStep((def as { steps?: unknown[] }).steps?.[index], path.slice(2));
}

/** Issues with `$secrets` in a definition (raw, before its own schema ran), each with its path. Expressions that do not compile are skipped. */
export function secretIssues(def: unknown, maxDepth: number): Issue[] {
  const issues: Issue[] = [];
  for (const { path, source } of findExpressions(def, [], maxDepth)) {
    if (!source.includes('secrets')) continue;
    let refs: ReturnType<typeof secretRefs>;
    try {
      refs = secretRefs(source);
    } catch {
      continue; // reported by the compile check
    }
    if (refs.names.length + refs.badNames.length === 0 && !refs.misused) continue;
    for (const name of refs.badNames) issues.push({ path, message: `$secrets.${name}: a secret name ${SECRET_NAME_MESSAGE}` });
    if (refs.misused) issues.push({ path, message: '$secrets may only be read as $secrets.NAME' });
    if (!allowedAt(def, path))
      issues.push({ path, message: "$secrets may be used only in an http_request's url, headers and body and in a notification's secret" });
  }
  return issues;
}
