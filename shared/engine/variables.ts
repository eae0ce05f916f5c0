import type { FieldError } from '../errors.ts';
import type { WorkflowDefinition } from './definition.ts';
import { hasType } from './variable-types.ts';

export const MAX_VARIABLES_BYTES = 256 * 1024;

/**
 * Run variables from a start request: inputs of declared variables must have the declared type,
 * undeclared inputs pass through unchanged, absent declared variables get their default (copied).
 * The result's JSON must fit in 256 KiB. Error paths are `variables.<name>` or `variables`.
 */
export function applyVariableDefaults(
  definition: Pick<WorkflowDefinition, 'variables'>,
  input: Record<string, unknown>,
): { ok: true; variables: Record<string, unknown> } | { ok: false; errors: FieldError[] } {
  const declared = definition.variables ?? {};
  const errors: FieldError[] = [];
  const entries: [string, unknown][] = [];
  for (const [name, decl] of Object.entries(declared)) {
    const given = Object.hasOwn(input, name) ? input[name] : undefined;
    if (given === undefined) {
      if (decl.default !== undefined) entries.push([name, structuredClone(decl.default)]);
    } else if (hasType(given, decl.type)) entries.push([name, given]);
    else errors.push({ path: `variables.${name}`, message: `must be a ${decl.type}` });
  }
  for (const [name, value] of Object.entries(input)) if (!Object.hasOwn(declared, name)) entries.push([name, value]);
  if (errors.length) return { ok: false, errors };
  const variables = Object.fromEntries(entries);
  let size: number;
  try {
    size = Buffer.byteLength(JSON.stringify(variables));
  } catch {
    return { ok: false, errors: [{ path: 'variables', message: 'must be JSON' }] };
  }
  if (size > MAX_VARIABLES_BYTES)
    return { ok: false, errors: [{ path: 'variables', message: `must be at most ${MAX_VARIABLES_BYTES} bytes as JSON` }] };
  return { ok: true, variables };
}
