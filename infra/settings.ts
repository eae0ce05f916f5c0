import type { Route } from '../shared/http/route.ts';
import { PLAN_RATE_LIMITS } from '../shared/config.ts';

/** API Gateway's throttle: steady requests per second and the bucket of a burst. */
export type Throttle = { rateLimit: number; burstLimit: number };
/** `default` is the stage's (every route without a class of its own, and unknown paths). */
export type ThrottleClass = 'default' | NonNullable<Route['throttle']>;
export const THROTTLE_CLASSES: readonly ThrottleClass[] = ['default', 'login', 'trigger', 'approval'];

/**
 * The defaults of the operations settings (README "Deploying to AWS" lists them). The workers'
 * maximum concurrency keeps a burst of runs from taking the account's Lambda concurrency (1,000 by
 * default) from the API: 50 runs-worker invocations of up to 10 runs each, 10 notification ones.
 */
export const DEFAULTS = {
  runsWorkerConcurrency: 50,
  notifyWorkerConcurrency: 10,
  /** No batching window: a run starts as soon as its message arrives. */
  runsBatchingWindowSeconds: 0,
  /** Days finished runs, their events, approvals and artifacts are kept (DynamoDB TTL, S3 lifecycle). */
  retentionDays: 90,
  /** How many times one FAILED run may be retried from its failed step (RETRY_LIMIT). */
  retryLimit: 10,
  /** A release interrupts only the webhook runs nothing can carry on (README "Restarts, crashes and INTERRUPTED runs"). */
  restartSweep: 'orphaned',
  /** Failed authentications per source address per minute before a failing request gets 429 (AUTH_FAILURE_LIMIT). */
  authFailureLimit: 300,
} as const;

/**
 * The edge throttles, per class. Login gets a low limit of its own; the trigger and approval routes
 * admit one account of the largest plan at its full per-minute budget (the service's own metering
 * refuses each account beyond its plan); every other route keeps the stage's 500 rps (burst 1,000).
 */
export function defaultThrottles(planRateLimits: Partial<Record<string, number>> = {}): Record<ThrottleClass, Throttle> {
  const perMinute = Math.max(...Object.values({ ...PLAN_RATE_LIMITS, ...planRateLimits }).map(Number));
  const planRate = Math.ceil(perMinute / 60);
  return {
    default: { rateLimit: 500, burstLimit: 1000 },
    login: { rateLimit: 5, burstLimit: 10 },
    trigger: { rateLimit: planRate, burstLimit: 2 * planRate },
    approval: { rateLimit: planRate, burstLimit: 2 * planRate },
  };
}
