import { config } from '../config.ts';
import { RATE_WINDOW_SECONDS } from '../db/entities/rate-counters.ts';
import type { Lane } from './dispatch.ts';

// The runs lanes (docs/architecture.md "Fair tenants"): the runs worker consumes two queues, each
// through an event source with its own maximum concurrency. A heavy account's new runs go to the heavy
// lane, so however long its steps hold an invocation, the main lane's invocations stay free for the
// other accounts' runs. Which account is heavy is read from the count the trigger makes anyway: the
// account's rate window (`takeAccountBudget`), so classifying costs no request.

const WINDOW_MS = RATE_WINDOW_SECONDS * 1000;

/** Accounts this instance has seen heavy, and until when (ms) it treats them so, oldest first. */
const heavyUntil = new Map<string, number>();
/** At most this many accounts are remembered; past it the expired go first, then the longest remembered. */
export const MAX_HEAVY_ACCOUNTS = 1_000;

/**
 * The lane of an account's new run: `heavy` when its requests in the current rate window
 * (`requestsThisWindow`, every open-platform request counted; an estimate above one counter) exceed
 * HEAVY_ACCOUNT_REQUESTS_PER_MINUTE, or when this instance has seen it heavy in this window or the one
 * before (sticky: at a window's start every count begins at 0, and a flood going on across the
 * boundary would otherwise send its next few hundred runs to the main lane). Otherwise none: the main
 * lane. Without a count (a caller that has none), only the sticky memory decides.
 *
 * The threshold's default (infra/settings.ts) is half the runs the main lane holds at once
 * (runsWorkerConcurrency × RUNS_BATCH_SIZE / 2, 250): if every run of the minute were still in
 * flight, an account over it could fill half the main lane; below it, no account can fill it alone.
 */
export function laneOf(
  accountId: string,
  requestsThisWindow: number | undefined,
  now = Date.now(),
  threshold = config().HEAVY_ACCOUNT_REQUESTS_PER_MINUTE,
): Lane | undefined {
  if (requestsThisWindow !== undefined && requestsThisWindow > threshold) {
    // Until the end of the next window.
    remember(accountId, (Math.floor(now / WINDOW_MS) + 2) * WINDOW_MS, now);
    return 'heavy';
  }
  const until = heavyUntil.get(accountId);
  if (until === undefined) return undefined;
  if (now < until) return 'heavy';
  heavyUntil.delete(accountId);
  return undefined;
}

function remember(accountId: string, until: number, now: number) {
  if (heavyUntil.get(accountId) === until) return;
  heavyUntil.delete(accountId);
  if (heavyUntil.size >= MAX_HEAVY_ACCOUNTS) {
    for (const [id, t] of heavyUntil) if (t <= now) heavyUntil.delete(id);
    for (const id of heavyUntil.keys()) {
      if (heavyUntil.size < MAX_HEAVY_ACCOUNTS) break;
      heavyUntil.delete(id);
    }
  }
  heavyUntil.set(accountId, until);
}

/** How many accounts this instance remembers as heavy (tests). */
export const heavyAccountsKept = () => heavyUntil.size;

/** For tests: forget every account seen heavy. */
export function forgetHeavyAccounts() {
  heavyUntil.clear();
}
