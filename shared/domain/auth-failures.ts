import { authFailSubject, countPastLimit, giveBack } from '../db/entities/counter.ts';
import { addressUnit } from '../ip-ranges.ts';
import { config } from '../config.ts';
import { AppError, rateLimited } from '../errors.ts';
import { emit } from '../metrics.ts';

/**
 * The per-source-address budget for failed authentication (`AUTH_FAILURE_LIMIT` failures per address
 * per minute, every route). Only failures are counted and only failures are refused: a request whose
 * credential is valid is never looked at here, so a valid key or session works from an address that
 * is over its budget, even when an attacker shares the address (NAT, proxy). Over the budget, a failed
 * request answers 429 with `Retry-After` instead of 401, and this instance stops writing for that
 * address until the window ends.
 *
 * An address is counted as its unit (`addressUnit`: an IPv4 address, an IPv6 /64).
 *
 * Cost: one conditional UpdateItem per failed authentication (none once the instance knows the address
 * is over), nothing on any success path.
 */
export const AUTH_FAILURE_WINDOW_SECONDS = 60;

/** Addresses known to be over their budget, until the end of their window (epoch seconds). */
const blocked = new Map<string, number>();
const MAX_BLOCKED = 10_000;

const refusal = (retryAfter: number) => {
  emit('AuthFailureLimited');
  return rateLimited(Math.max(1, retryAfter), {});
};

/** Throws 429 if this instance already knows `ip` is over its budget (no I/O). */
export function checkBudget(ip: string, now = Date.now()): void {
  const unit = addressUnit(ip);
  const until = blocked.get(unit);
  if (until === undefined) return;
  const left = until - Math.floor(now / 1000);
  if (left > 0) throw refusal(left);
  blocked.delete(unit);
}

/**
 * Count one failed authentication from `ip`: one conditional write to the address's counter for the
 * current minute (it stops counting one past the limit). Returns the seconds until the window ends
 * when the address is now over its budget, otherwise undefined.
 */
export async function recordFailure(ip: string, now = Date.now()): Promise<number | undefined> {
  const unit = addressUnit(ip);
  const limit = config().AUTH_FAILURE_LIMIT;
  const resetAt = (Math.floor(now / 1000 / AUTH_FAILURE_WINDOW_SECONDS) + 1) * AUTH_FAILURE_WINDOW_SECONDS;
  const over = (await countPastLimit(authFailSubject(unit), limit, AUTH_FAILURE_WINDOW_SECONDS, now)) > limit;
  if (!over) return undefined;
  if (blocked.size >= MAX_BLOCKED) blocked.delete(blocked.keys().next().value as string);
  blocked.set(unit, resetAt);
  return resetAt - Math.floor(now / 1000);
}

/** Take back a failure recorded before the credential was checked (login reserves one; a success gives it back). */
export async function forgiveFailure(ip: string, now = Date.now()): Promise<void> {
  await giveBack(authFailSubject(addressUnit(ip)), AUTH_FAILURE_WINDOW_SECONDS, now);
}

/** The 429 for an address over its budget, `retryAfter` seconds before its window ends. */
export const overBudget = (retryAfter: number) => refusal(retryAfter);

/**
 * The error to answer for a failed authentication `err` from `ip`: `err` itself for anything but a 401;
 * a 401 is counted, and becomes 429 once the address is over its budget.
 */
export async function failedAuthentication(ip: string, err: unknown, now = Date.now()): Promise<unknown> {
  if (!(err instanceof AppError) || err.kind !== 'unauthorized') return err;
  try {
    checkBudget(ip, now);
  } catch (limited) {
    return limited;
  }
  const over = await recordFailure(ip, now);
  return over === undefined ? err : refusal(over);
}

/** Forget what this instance knows (tests). */
export const resetAuthFailureMemo = () => blocked.clear();
