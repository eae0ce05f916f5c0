import { compileExpression, findExpressions } from './expressions.ts';

export { referencedSecret, SECRET_REFERENCE } from './secret-reference.ts';

/**
 * `$secrets.NAME` in definitions: account secrets (shared/domain/account-secrets.ts) that an
 * expression reads by name. Names are static (found in the expression's syntax tree at save time), so
 * the worker reads only the secrets a step names, and only where they may go: a step's request (its
 * url, headers and body: ./definition-checks.ts), and a notification's signing secret. Anywhere else a value could reach variables,
 * approvals, artifacts or the run's output, so a definition that tries is refused.
 */

export const SECRET_NAME = /^[A-Z][A-Z0-9_]{0,63}$/;
export const SECRET_NAME_MESSAGE = 'must be A-Z, 0-9 and _, starting with a letter (at most 64)';
/** An account secret's `allowedHosts` entry, lower-case: a host name, or `*.` and one. */
export const HOST_PATTERN = /^(\*\.)?([a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?\.)*[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?$/;
export const MAX_ALLOWED_HOSTS = 20;

/**
 * Whether `host` (a URL's hostname) is one of `patterns`: equal (any case, without a trailing dot),
 * or, for `*.example.com`, a subdomain of example.com at any depth (not example.com itself).
 */
export function hostAllowed(patterns: readonly string[], host: string): boolean {
  const h = host.toLowerCase().replace(/\.$/, '');
  return patterns.some((p) => (p.startsWith('*.') ? h.endsWith(p.slice(1)) && h.length > p.length - 1 : h === p));
}

type Node = Record<string, unknown>;
const isSecretsVariable = (n: unknown) => (n as Node | undefined)?.type === 'variable' && (n as Node).value === 'secrets';

/**
 * The secret names an expression reads, the malformed names it asks for, and whether it uses
 * `$secrets` in any other way than `$secrets.NAME` (dynamically, bound, passed to a function).
 */
export function secretRefs(source: string): { names: string[]; badNames: string[]; misused: boolean } {
  const names = new Set<string>();
  const badNames = new Set<string>();
  let misused = false;
  const seen = new Set<unknown>();
  const walk = (v: unknown): void => {
    if (typeof v !== 'object' || v === null || seen.has(v)) return;
    seen.add(v);
    if (Array.isArray(v)) {
      for (const item of v) walk(item);
      return;
    }
    const n = v as Node;
    const steps = n.type === 'path' && Array.isArray(n.steps) ? (n.steps as Node[]) : undefined;
    const [first, second] = steps ?? [];
    if (steps && isSecretsVariable(first)) {
      const plain = Object.keys(first as Node).every((k) => ['type', 'value', 'position'].includes(k));
      if (plain && second?.type === 'name' && typeof second.value === 'string') {
        (SECRET_NAME.test(second.value) ? names : badNames).add(second.value);
        seen.add(first);
      }
    } else if (isSecretsVariable(n)) misused = true;
    for (const child of Object.values(n)) walk(child);
  };
  walk(compileExpression(source).ast());
  return { names: [...names], badNames: [...badNames], misused };
}

const stepNames = new WeakMap<object, string[]>();

/** The secrets an http_request step reads (url, headers, body), computed once per step object. */
export function stepSecretNames(step: { url: string; headers?: unknown; body?: unknown }): string[] {
  let names = stepNames.get(step);
  if (!names) {
    const found = new Set<string>();
    for (const { source } of findExpressions({ url: step.url, headers: step.headers, body: step.body })) {
      if (!source.includes('secrets')) continue;
      try {
        for (const n of secretRefs(source).names) found.add(n);
      } catch {
        // Does not compile (saved under older rules): evaluating it fails the step with EXPRESSION_FAILED.
      }
    }
    names = [...found];
    stepNames.set(step, names);
  }
  return names;
}
