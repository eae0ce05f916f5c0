import { FIRE_MAX_EVENT_AGE_MS } from '../shared/schedules/clock.ts';
import type { Worker } from './bindings.ts';

/**
 * The functions AWS invokes asynchronously, and how Lambda's async queue treats their events: an
 * error (or a timeout) is retried `ASYNC_RETRY_ATTEMPTS` times, about 1 and then 2 minutes apart; an
 * event that failed its last try, or waited longer than its maximum age (a throttled function: throttles
 * are retried until then and use up no attempt), goes to the on-failure queue (`ASYNC_FAILURES_QUEUE`,
 * shared/db/table.ts) as a record of what was tried. The CDK stack sets each one's EventInvokeConfig
 * from this (infra/constructs/async-invokes.ts); the local stack's async invoker does the same
 * (infra/local/async-invoke.ts). The sources' own retry settings (EventBridge Scheduler's RetryPolicy,
 * the rule's) see only a failed invoke, never an error of the function.
 */
export const ASYNC_INVOKES = {
  /**
   * EventBridge Scheduler's target. An hour: a fire later than that is not what its schedule
   * promised (the operator decides from the on-failure queue whether to run it now), and it stays well
   * within the 24 hours its idempotency key is kept, so a late retry is still recognised.
   */
  'schedule/fire': { maxEventAgeSeconds: FIRE_MAX_EVENT_AGE_MS / 1000 },
  /**
   * The EventBridge rule's tick, every minute. Ten minutes: enough for both retries of a tick that
   * timed out (60 s each, plus 1 and 2 minutes of waiting); an older tick has ten newer ones doing
   * the same work.
   */
  'sweep/scheduled': { maxEventAgeSeconds: 600 },
} as const satisfies Partial<Record<Worker, { maxEventAgeSeconds: number }>>;

export type AsyncFunction = keyof typeof ASYNC_INVOKES;

/** Lambda's retries of a function error in an asynchronous invocation (its default, set explicitly). */
export const ASYNC_RETRY_ATTEMPTS = 2;

/** About how long Lambda waits before each retry (AWS: 1 minute, then 2; not promised to the second). */
export const ASYNC_RETRY_DELAYS_SECONDS = [60, 120] as const;
