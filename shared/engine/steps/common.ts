import * as z from 'zod';
import { isExpression } from '../expression-syntax.ts';
import { VarName } from '../variable-types.ts';

/** The parts every step schema shares (docs/workflows.md): ids, targets, `when`, `onError`, literal JSON. */

export const StepId = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be 1-64 letters, digits, _ or -');
export const Reviewer = z
  .string()
  .regex(/^user:usr_[0-9a-hjkmnp-tv-z]{26}$|^role:(admin|member)$/, 'must be user:<user id>, role:admin or role:member');

export type Json = string | number | boolean | null | Json[] | { [key: string]: Json };
/** Literal JSON inside a definition may nest this deep (keeps every walk over it shallow). */
export const MAX_JSON_DEPTH = 64;

function jsonIssue(v: unknown, path: (string | number)[], depth: number): { path: (string | number)[]; message: string } | undefined {
  if (depth > MAX_JSON_DEPTH) return { path, message: `JSON is nested deeper than ${MAX_JSON_DEPTH} levels` };
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return undefined;
  if (typeof v === 'number') return Number.isFinite(v) ? undefined : { path, message: 'must be a finite number' };
  if (Array.isArray(v)) {
    for (const [i, item] of v.entries()) {
      const issue = jsonIssue(item, [...path, i], depth + 1);
      if (issue) return issue;
    }
    return undefined;
  }
  if (typeof v === 'object' && [Object.prototype, null].includes(Object.getPrototypeOf(v))) {
    for (const [k, item] of Object.entries(v)) {
      const issue = jsonIssue(item, [...path, k], depth + 1);
      if (issue) return issue;
    }
    return undefined;
  }
  return { path, message: 'must be a JSON value' };
}

/** Any JSON value (required: `undefined` is not JSON). */
export const JsonValue = z.custom<Json>().superRefine((v, ctx) => {
  const issue = jsonIssue(v, [], 0);
  if (issue) ctx.addIssue({ code: 'custom', ...issue });
});

export const isHttpUrl = (s: string, localHttpOnly = false) => {
  if (!/^https?:\/\//i.test(s) || !URL.canParse(s)) return false;
  const url = new URL(s);
  if (url.protocol === 'https:') return true;
  return !localHttpOnly || url.hostname === 'localhost' || url.hostname === '127.0.0.1';
};

/** The most steps in a definition's list (and in a loop's). */
export const MAX_STEPS = 100;
/** The longest list a loop (`for_each`) takes: its `maxItems` is at most this, and this by default. */
export const MAX_ITEMS = 1000;

export const When = z.custom<boolean | string>((v) => typeof v === 'boolean' || (typeof v === 'string' && isExpression(v)), {
  message: 'must be a boolean or an expression "{% ... %}"',
});
/** Where a step goes after it: another step's id (of the same list) or `"$end"`, which ends the run SUCCEEDED. */
export const END = '$end';
export const TARGET = /^([A-Za-z0-9_-]{1,64}|\$end)$/;
export const Target = z.string().regex(TARGET, 'must be a step id or "$end"');
/** What a step's failure does: fail the run (default), go on, or go to another step (`$steps.<id>.error` holds it). */
export const OnError = z.union([z.enum(['fail', 'continue']), z.strictObject({ next: Target })]);
export type OnError = z.infer<typeof OnError>;
/** The fields of every step. */
export const base = {
  id: StepId,
  title: z.string().optional(),
  when: When.optional(),
  next: Target.optional(),
  onError: OnError.optional(),
};

export { VarName };
