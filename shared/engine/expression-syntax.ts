/**
 * True when the whole string is `{% ... %}` (nothing, not even whitespace, outside the delimiters).
 * Apart from ./expressions.ts (jsonata): the schemas that only recognise an expression (the step
 * schemas, the channel schemas) load no evaluator.
 */
export const isExpression = (s: string): boolean => s.length >= 4 && s.startsWith('{%') && s.endsWith('%}');
