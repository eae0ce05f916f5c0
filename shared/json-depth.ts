/**
 * JSON from outside (request bodies, payloads, variables, form values, http_request answers) may nest
 * at most this deep. `JSON.parse` copes with any depth, but every later recursive walk
 * (`JSON.stringify`, zod, jsonata, the DynamoDB marshaller) overflows the stack somewhere past a few
 * thousand levels; 64 is far beyond any real document.
 */
export const MAX_JSON_DEPTH = 64;

/** The path of the first value nested deeper than `max` (`a.0.b`), or undefined. Iterative: it cannot overflow itself. */
export function tooDeep(value: unknown, max = MAX_JSON_DEPTH): string | undefined {
  const stack: [unknown, string[]][] = [[value, []]];
  while (stack.length) {
    const [v, path] = stack.pop() as [unknown, string[]];
    if (typeof v !== 'object' || v === null) continue;
    if (path.length >= max) return path.join('.');
    for (const [k, child] of Object.entries(v)) stack.push([child, [...path, k.slice(0, 32)]]);
  }
  return undefined;
}
