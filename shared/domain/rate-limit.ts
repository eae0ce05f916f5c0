import { config, type Plan } from '../config.ts';
import { countInWindow } from '../db/entities/counter.ts';
import { rateLimited } from '../errors.ts';
import { emit } from '../metrics.ts';

const WINDOW_SECONDS = 60;

/** `X-RateLimit-*` and the IETF `RateLimit-Policy` / `RateLimit` headers for a window state. */
export function rateLimitHeaders(limit: number, remaining: number, resetAt: number, now: number): Record<string, string> {
  const reset = Math.max(0, resetAt - Math.floor(now / 1000));
  return {
    'x-ratelimit-limit': String(limit),
    'x-ratelimit-remaining': String(remaining),
    'x-ratelimit-reset': String(resetAt),
    'ratelimit-policy': `"account";q=${limit};w=${WINDOW_SECONDS}`,
    ratelimit: `"account";r=${remaining};t=${reset}`,
  };
}

/**
 * Take one request from the account's per-minute budget (shared by every open-platform endpoint).
 * The count goes out at once, in parallel with the plan's read when that is not cached yet.
 * Returns the headers for the response; over the budget, throws 429 carrying them and `Retry-After`.
 */
export async function takeAccountBudget(accountId: string, plan: Plan | Promise<Plan>, now = Date.now()): Promise<Record<string, string>> {
  const [w, p] = await Promise.all([countInWindow(`ACC#${accountId}`, WINDOW_SECONDS, now), plan]);
  const limit = config().rateLimits[p];
  const headers = rateLimitHeaders(limit, Math.max(0, limit - w.count), w.resetAt, now);
  if (w.count <= limit) return headers;
  emit('RateLimited');
  throw rateLimited(Math.max(1, w.resetAt - Math.floor(now / 1000)), headers);
}
