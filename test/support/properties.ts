// Shared by the no-5xx property tests: the request shape they generate, and well-formed requests
// that every property tries first.

export type Body = { body?: string; isBase64Encoded: boolean };
export type Request = {
  headers: Record<string, string>;
  query?: Record<string, string>;
  params?: Record<string, string>;
  body: Body;
  sourceIp: string;
};

/** A well-formed request: the given credential, a JSON body when given, from a public address. */
export const good = (
  authorization: string,
  opts: { json?: unknown; params?: Record<string, string>; query?: Record<string, string> } = {},
): Request => ({
  headers: { authorization, ...(opts.json !== undefined ? { 'content-type': 'application/json' } : {}) },
  body: opts.json !== undefined ? { body: JSON.stringify(opts.json), isBase64Encoded: false } : { isBase64Encoded: false },
  sourceIp: '203.0.113.7',
  ...(opts.params ? { params: opts.params } : {}),
  ...(opts.query ? { query: opts.query } : {}),
});

/**
 * fast-check parameters whose `examples` run first on every run: a property that counts its
 * successes then sees at least these, however the random requests fall.
 */
export const runsWith = (runs: { numRuns: number }, ...examples: Request[]) => ({
  ...runs,
  examples: examples.map((r) => [r] as [Request]),
});
