import jsonata from 'jsonata';
import { StepError } from '../step-error.ts';
import { isExpression } from './expression-syntax.ts';

/**
 * JSONata expressions inside workflow definitions: a string that is exactly `{% source %}`.
 *
 * Budgets are enforced with JSONata's `__evaluate_entry` / `__evaluate_exit` hooks (the
 * "timeboxExpression" technique). JSONata 2.2 looks the hooks up under `Symbol.for('jsonata.__evaluate_*')`
 * (a string-named `assign` is silently ignored), so they are installed under those symbols once per
 * compiled expression. The hooks are stateless: each evaluation binds its own budget state, and the
 * hooks read it from the evaluation's root frame (`environment.base`), which JSONata creates per call.
 * Concurrent evaluations of one cached expression therefore never share state. Limits: the hooks run
 * between evaluation steps, so one synchronous built-in call is not interrupted; `$pad` is replaced by
 * a bounded version and sequences are capped at `MAX_SEQUENCE` items to keep single calls small.
 */

export type Path = (string | number)[];
export type Scope = {
  vars: Record<string, unknown>;
  execution: Record<string, unknown>;
  steps: Record<string, unknown>;
  /** Account secrets an http_request step reads (`$secrets.NAME`); bound only where given. */
  secrets?: Record<string, string>;
  /** A wait_for_callback's `request`: where and with what to report back (`$callback.url`, `$callback.token`). */
  callback?: { url: string; token: string };
  /** Inside a `for_each`: the current item and its index. */
  item?: unknown;
  index?: number;
  /** A webhook run's request (`$trigger`), where its workflow reads it. */
  trigger?: Record<string, unknown>;
};
/** `timeoutMs` bounds one `evaluateTemplate` call (all of its expressions); the others apply per expression. */
export type Budget = { timeoutMs: number; maxDepth: number; maxBytes: number };
/** What callers may do with a compiled expression (it is cached and shared: do not `assign` on it). */
export type CompiledExpression = Pick<jsonata.Expression, 'evaluate' | 'ast'>;

export const DEFAULT_BUDGET: Readonly<Budget> = { timeoutMs: 1000, maxDepth: 500, maxBytes: 256 * 1024 };
/** Longest sequence an expression may build (JSONata's `sequence` option); `[1..10000000]` fails fast. */
export const MAX_SEQUENCE = 1_000_000;
/** Deepest JSON an expression result may be. */
const MAX_RESULT_DEPTH = 1000;
const CACHE_SIZE = 500;

/** A syntax error in an expression; `position` is JSONata's character offset in the source. */
export class ExpressionError extends Error {
  constructor(
    message: string,
    readonly position?: number,
  ) {
    super(message);
    this.name = 'ExpressionError';
  }
}

/** The budget was exceeded (thrown from the hooks; JSONata keeps the message of non-JSONata errors). */
class BudgetError extends Error {}

/** The JSONata source of an expression string (between the delimiters, trimmed). */
export const expressionSource = (s: string): string => s.slice(2, -2).trim();

// A space cannot occur in a JSONata variable name, so no expression can read or shadow this binding.
const BUDGET_BINDING = 'flowgate budget';
type EvalState = Budget & { deadline: number };
type Env = { base?: { depth?: number; lookup(name: string): unknown } };

const stateOf = (env: Env): EvalState | undefined => env.base?.lookup(BUDGET_BINDING) as EvalState | undefined;
const sizeError = (s: EvalState) => new BudgetError(`result is larger than the size budget of ${s.maxBytes} bytes`);

function onEntry(_expr: unknown, _input: unknown, env: Env) {
  const s = stateOf(env);
  if (!s) return;
  if ((env.base?.depth ?? 0) > s.maxDepth) throw new BudgetError(`evaluation is nested deeper than ${s.maxDepth} levels`);
  if (Date.now() > s.deadline) throw new BudgetError(`evaluation took longer than ${s.timeoutMs} ms`);
}

function onExit(_expr: unknown, _input: unknown, env: Env, result: unknown) {
  const s = stateOf(env);
  // A string has at least as many UTF-8 bytes as UTF-16 units: a longer one can never fit.
  if (s && typeof result === 'string' && result.length > s.maxBytes) throw sizeError(s);
}

/** `$pad` builds its padding in one synchronous call; refuse widths beyond the size budget first. */
function boundedPad(this: jsonata.Focus, str: string | undefined, width: number, char?: string) {
  if (str === undefined) return undefined;
  const pad = char === undefined || char.length === 0 ? ' ' : char;
  const w = Math.trunc(width);
  const s = stateOf(this.environment as unknown as Env);
  if (s && Math.abs(w) > s.maxBytes) throw sizeError(s);
  const padLength = Math.abs(w) - Array.from(str).length;
  if (padLength <= 0) return str;
  const unit = Array.from(pad).length;
  const padding =
    unit === 1
      ? pad.repeat(padLength)
      : Array.from(pad.repeat(Math.ceil(padLength / unit)))
          .slice(0, padLength)
          .join('');
  return w > 0 ? str + padding : padding + str;
}

const cache = new Map<string, CompiledExpression>();

/** Compile (or fetch from a bounded LRU cache) a JSONata source. Throws `ExpressionError` on a syntax error. */
export function compileExpression(source: string): CompiledExpression {
  const hit = cache.get(source);
  if (hit) {
    cache.delete(source);
    cache.set(source, hit);
    return hit;
  }
  let expr: jsonata.Expression;
  try {
    expr = jsonata(source, { sequence: MAX_SEQUENCE });
  } catch (e) {
    const err = e as { message?: unknown; position?: unknown };
    const message = typeof err?.message === 'string' && err.message ? err.message : 'Invalid expression';
    const position = typeof err?.position === 'number' ? err.position : undefined;
    throw new ExpressionError(position === undefined ? message : `${message} (at position ${position})`, position);
  }
  // `assign` is typed for names, but the hook lookup uses these symbols.
  expr.assign(Symbol.for('jsonata.__evaluate_entry') as unknown as string, onEntry);
  expr.assign(Symbol.for('jsonata.__evaluate_exit') as unknown as string, onExit);
  expr.registerFunction('pad', boundedPad, '<s-ns?:s>');
  cache.set(source, expr);
  if (cache.size > CACHE_SIZE) cache.delete(cache.keys().next().value as string);
  return expr;
}

/**
 * Every expression string inside `value` (objects and arrays walked), with its path (`path` prefixed),
 * in document order. Nothing deeper than `maxDepth` levels below `value` is visited (stack safety).
 */
export function findExpressions(value: unknown, path: Path = [], maxDepth = 256): { path: Path; source: string }[] {
  const found: { path: Path; source: string }[] = [];
  const walk = (v: unknown, p: Path, depth: number) => {
    if (typeof v === 'string') {
      if (isExpression(v)) found.push({ path: p, source: expressionSource(v) });
    } else if (depth < maxDepth && Array.isArray(v)) {
      for (const [i, item] of v.entries()) walk(item, [...p, i], depth + 1);
    } else if (depth < maxDepth && typeof v === 'object' && v !== null) {
      for (const [k, item] of Object.entries(v)) walk(item, [...p, k], depth + 1);
    }
  };
  walk(value, path, 0);
  return found;
}

const isFunction = (v: unknown) =>
  typeof v === 'function' ||
  (typeof v === 'object' &&
    v !== null &&
    ((v as Record<string, unknown>)._jsonata_function === true || (v as Record<string, unknown>)._jsonata_lambda === true));

/** A plain JSON copy of a JSONata result (sequences become arrays); throws on anything that is not JSON. */
function toJson(v: unknown, depth = 0): unknown {
  if (depth > MAX_RESULT_DEPTH) throw new BudgetError(`result is nested deeper than ${MAX_RESULT_DEPTH} levels`);
  if (v === undefined || v === null || typeof v === 'string' || typeof v === 'boolean') return v;
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) throw new BudgetError('result is not a finite number');
    return v;
  }
  if (isFunction(v)) throw new BudgetError('result is a function, not JSON');
  if (Array.isArray(v)) return v.map((item) => (item === undefined ? null : toJson(item, depth + 1)));
  if (typeof v === 'object') {
    const proto = Object.getPrototypeOf(v);
    if (proto !== Object.prototype && proto !== null) throw new BudgetError('result is not JSON');
    const entries: [string, unknown][] = [];
    for (const [k, item] of Object.entries(v)) if (item !== undefined) entries.push([k, toJson(item, depth + 1)]);
    return Object.fromEntries(entries);
  }
  throw new BudgetError(`result is not JSON (${typeof v})`);
}

const where = (source: string, path: Path) => {
  const shown = source.length > 80 ? `${source.slice(0, 79)}…` : source;
  return path.length ? `expression {% ${shown} %} at ${path.join('.')}` : `expression {% ${shown} %}`;
};

const messageOf = (e: unknown) => {
  const m = (e as { message?: unknown })?.message;
  return typeof m === 'string' && m ? m : String(e);
};

async function evaluateOne(source: string, scope: Scope, state: EvalState): Promise<unknown> {
  const expr = compileExpression(source);
  const bindings = {
    vars: scope.vars,
    execution: scope.execution,
    steps: scope.steps,
    ...(scope.secrets && { secrets: scope.secrets }),
    ...(scope.callback && { callback: scope.callback }),
    ...(scope.index !== undefined && { item: scope.item, index: scope.index }),
    ...(scope.trigger && { trigger: scope.trigger }),
    [BUDGET_BINDING]: state,
  };
  const result = toJson(await expr.evaluate(scope.vars, bindings));
  if (result !== undefined && Buffer.byteLength(JSON.stringify(result)) > state.maxBytes) throw sizeError(state);
  return result;
}

/**
 * A deep copy of `value` with every expression string replaced by its result, evaluated with `$vars`,
 * `$execution` and `$steps` bound (and `scope.vars` as the input `$`; `$secrets`, `$item`/`$index`
 * and `$trigger` where the scope has them). Other strings are literal.
 * An expression that yields nothing (JSONata `undefined`) becomes `null` inside an array, drops its key
 * inside an object, and is `undefined` when it is the whole `value`.
 *
 * Budgets (defaults in `DEFAULT_BUDGET`): `timeoutMs` for the whole call, `maxDepth` of evaluation
 * nesting, `maxBytes` of each expression's result as JSON. Any failure, budget or otherwise, is thrown
 * as `StepError('EXPRESSION_FAILED', '<expression and path>: <message>')` and nothing else is thrown.
 * `options.path` prefixes the paths named in messages (e.g. `['body']`).
 */
export async function evaluateTemplate(
  value: unknown,
  scope: Scope,
  options: { budget?: Partial<Budget>; path?: Path } = {},
): Promise<unknown> {
  const budget = { ...DEFAULT_BUDGET, ...options.budget };
  const state: EvalState = { ...budget, deadline: Date.now() + budget.timeoutMs };
  const walk = async (v: unknown, p: Path): Promise<unknown> => {
    if (typeof v === 'string') {
      if (!isExpression(v)) return v;
      const source = expressionSource(v);
      try {
        return await evaluateOne(source, scope, state);
      } catch (e) {
        throw new StepError('EXPRESSION_FAILED', `${where(source, p)}: ${messageOf(e)}`);
      }
    }
    if (Array.isArray(v)) {
      const out: unknown[] = [];
      for (const [i, item] of v.entries()) out.push((await walk(item, [...p, i])) ?? null);
      return out;
    }
    if (typeof v === 'object' && v !== null) {
      const entries: [string, unknown][] = [];
      for (const [k, item] of Object.entries(v)) {
        const r = await walk(item, [...p, k]);
        if (r !== undefined) entries.push([k, r]);
      }
      return Object.fromEntries(entries);
    }
    return v;
  };
  try {
    return await walk(value, options.path ?? []);
  } catch (e) {
    if (e instanceof StepError) throw e;
    throw new StepError('EXPRESSION_FAILED', `template: ${messageOf(e)}`);
  }
}
