import * as z from 'zod';

/**
 * User data is arbitrary JSON (definitions, payloads, variables, step outputs). DynamoDB maps cannot
 * hold all of it (empty keys, numbers beyond its range, nesting over 32 levels, `constructor` keys
 * confuse the marshaller), so such fields are stored as JSON text and parsed back on read.
 */
export const jsonText = <T extends z.ZodType>(schema: T) => z.preprocess((v) => (typeof v === 'string' ? JSON.parse(v) : v), schema);

/** `fields` with the named JSON fields turned into text, for every write of them. */
export function asJsonText<T extends Record<string, unknown>>(fields: T, names: readonly string[]): T {
  const out: Record<string, unknown> = { ...fields };
  for (const k of names) if (out[k] !== undefined) out[k] = JSON.stringify(out[k]);
  return out as T;
}
