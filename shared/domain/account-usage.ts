import { config, PLAN_RATE_LIMITS, type Plan } from '../config.ts';
import { getAccount } from '../db/entities/account.ts';
import { readAccountCounts } from '../db/entities/account-counts.ts';
import { RATE_WINDOW_SECONDS } from '../db/entities/rate-counters.ts';
import { notFound } from '../errors.ts';
import type { Principal } from './principal.ts';
import { runsOfLastDay } from './run-list.ts';
import { SCHEDULE_LIMITS } from './schedules.ts';
import { WEBHOOK_LIMITS } from './webhooks.ts';

type SessionPrincipal = Extract<Principal, { kind: 'session' }>;

/** A count against a plan's limit (`limit` null: unlimited). */
export type Usage = { used: number; limit: number | null };

/**
 * The account's plan, its limits and what is used of them now: runs in the last 24 hours (at most the
 * newest 100 are counted: `more`), API requests in the current rate-limit minute (counted on the account
 * item; above 500 requests a second the budget is spread over counters and this is the first one's share),
 * enabled schedules and webhooks. Reads: the account, one BatchGet of its three counter items, the runs window.
 */
export async function accountUsage(p: SessionPrincipal, now = Date.now()) {
  const account = await getAccount(p.accountId);
  if (!account) throw notFound('ACCOUNT_NOT_FOUND', 'The account no longer exists.');
  const [counts, day] = await Promise.all([readAccountCounts(p.accountId), runsOfLastDay(p.accountId, now)]);
  const windowStart = Math.floor(now / 1000 / RATE_WINDOW_SECONDS) * RATE_WINDOW_SECONDS;
  const plan: Plan = account.plan;
  const orNull = (n: number | undefined) => (n === undefined ? null : n);
  return {
    plan,
    runs: { last24Hours: day.rows.length, more: day.more },
    rate: {
      used: counts.rateWindow === windowStart ? counts.rateCount : 0,
      limit: config().rateLimits[plan] ?? PLAN_RATE_LIMITS[plan],
      windowSeconds: RATE_WINDOW_SECONDS,
    },
    schedules: { used: counts.enabledSchedules, limit: orNull(SCHEDULE_LIMITS[plan]) } satisfies Usage,
    webhooks: { used: counts.webhooks, limit: orNull(WEBHOOK_LIMITS[plan]) } satisfies Usage,
  };
}
