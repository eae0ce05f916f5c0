import { config, type Plan } from '../config.ts';
import { countAccountRequest, type KeyOwner, RATE_WINDOW_SECONDS, shareOf } from '../db/entities/rate-counters.ts';
import { notFound, rateLimited } from '../errors.ts';
import { invalidKey } from './keys.ts';
import { emit } from '../metrics.ts';

const WINDOW_SECONDS = RATE_WINDOW_SECONDS;

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
 * The account's requests in the current window, from the count on the counter a request landed on:
 * exact on one counter. Above, on counters 1..n-1, that count times the counters (each instance spreads
 * its requests over them in turn); on counter 0, the account item, the count alone: every instance's
 * first request of the account lands there too (before it knows the layout), so its count is no share
 * of the requests (a burst of new instances would multiply into thousands) but a lower bound of them.
 */
export const requestsInWindow = (count: number, counters: number, counter: number) =>
  counters === 1 || counter === 0 ? count : count * counters;

/**
 * Take one request from the account's per-minute budget (shared by every open-platform endpoint):
 * one write that counts it and returns the plan. Above COUNTER_RATE requests a second the budget is
 * spread over counters, each admitting its share (rate-counters.ts): never more than the limit in all,
 * a refusal possibly a little before it when the requests are unevenly spread over the counters. Returns the plan and the headers for the response;
 * over the budget, throws 429 carrying them and `Retry-After`. For a key's request, `owner` makes the
 * same write check that the key's owner was neither disabled nor removed since the key was made (401
 * `INVALID_API_KEY` otherwise, nothing counted): see `countAccountRequest`. `used`: the account's
 * requests in this window, this one included (estimated above one counter): what a trigger's lane is
 * decided by (shared/engine/lanes.ts), at no extra request.
 */
export async function takeAccountBudget(
  accountId: string,
  now = Date.now(),
  owner?: KeyOwner,
): Promise<{ plan: Plan; headers: Record<string, string>; used: number }> {
  const w = await countAccountRequest(accountId, WINDOW_SECONDS, now, owner);
  if (!w) throw notFound('ACCOUNT_NOT_FOUND', 'The account no longer exists.');
  if (w === 'owner-changed') throw invalidKey();
  // One counter: the count against the limit, exact. Above COUNTER_RATE requests a second, the count on
  // the counter the request landed on against its share; what remains is estimated from it.
  const limit = config().rateLimits[w.plan];
  const share = shareOf(limit, w.counters, w.counter);
  const remaining = w.counters === 1 ? limit - w.count : (share - w.count) * w.counters;
  const headers = rateLimitHeaders(limit, Math.min(limit, Math.max(0, remaining)), w.resetAt, now);
  const used = requestsInWindow(w.count, w.counters, w.counter);
  if (w.count <= share) return { plan: w.plan, headers, used };
  emit('RateLimited');
  throw rateLimited(Math.max(1, w.resetAt - Math.floor(now / 1000)), headers);
}
