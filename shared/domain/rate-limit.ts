import { config, type Plan } from '../config.ts';
import { takeFromWindow } from '../db/entities/counter.ts';
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
 * Returns the headers for the response; over the budget, throws 429 carrying them and `Retry-After`.
 */
export async function takeAccountBudget(accountId: string, plan: Plan, now = Date.now()): Promise<Record<string, string>> {
  const limit = config().rateLimits[plan];
  const w = await takeFromWindow(`ACC#${accountId}`, limit, WINDOW_SECONDS, now);
  const headers = rateLimitHeaders(limit, Math.max(0, limit - w.count), w.resetAt, now);
  if (!w.allowed) emit('RateLimited');
  if (!w.allowed) throw rateLimited(Math.max(1, w.resetAt - Math.floor(now / 1000)), headers);
  return headers;
}
