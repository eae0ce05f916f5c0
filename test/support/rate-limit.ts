import { expect } from 'vitest';

/** The headers of a 429 over HTTP: Retry-After within the window, nothing remaining of `limit`, a reset in the next minute. */
export function expectRateLimitedHeaders(headers: Headers, limit: number) {
  const retryAfter = Number(headers.get('retry-after'));
  expect(Number.isInteger(retryAfter)).toBe(true);
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(60);
  expect(headers.get('x-ratelimit-limit')).toBe(String(limit));
  expect(headers.get('x-ratelimit-remaining')).toBe('0');
  const reset = Number(headers.get('x-ratelimit-reset'));
  expect(reset).toBeGreaterThanOrEqual(Math.floor(Date.now() / 1000));
  expect(reset).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000) + 60);
}
