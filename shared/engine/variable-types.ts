import * as z from 'zod';

// The parts of the definition schema that starting and reading runs need, in a module of their own:
// the definition schema compiles every expression with jsonata, which the functions that only start
// runs (the trigger) or read stored definitions must not load.

/** A workflow variable's name. */
export const VarName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,63}$/, 'must be a variable name (letters, digits, _; ≤ 64)');

export const VariableType = z.enum(['string', 'number', 'boolean', 'object', 'array']);
export type VariableType = z.infer<typeof VariableType>;

/** Whether a value has a declared variable (or form field) type. */
export const hasType = (v: unknown, type: VariableType): boolean =>
  type === 'array'
    ? Array.isArray(v)
    : type === 'object'
      ? typeof v === 'object' && v !== null && !Array.isArray(v)
      : type === 'number'
        ? typeof v === 'number' && Number.isFinite(v)
        : typeof v === type;
