import type { RunError, StepState } from '../db/entities/execution-state.ts';
import { newEvent, type RunEvent } from '../db/entities/run-events.ts';
import type { HttpRequestResult } from '../egress/http.ts';
import { type Here, iterationOf, setState, stateAt } from './flow.ts';
import type { HeldRun } from './session.ts';
import { parseRetryAfter } from '../retry-after.ts';
import { StepError } from '../step-error.ts';
import { MAX_RETRY_DELAY_SECONDS, type RetryOn, type RetryPolicy } from './steps/retry-policy.ts';

/**
 * Step retries (`retry` on `http_request` and `artifact`): an attempt that failed for one of the
 * listed reasons is made again after a backoff, up to `maxAttempts` in all. A wait that fits in what
 * is left of the worker's invocation and is short (`INLINE_RETRY_MS`) is slept there; any longer wait
 * goes to the queue (an SQS delay, as a `delay` step: no worker is held while waiting). Every retry
 * is written to the run (`step.retrying`, the step's `tries`) before the next attempt, which is
 * checkpointed as any external step is: an attempt that succeeded is never made again.
 */

/** Waits up to this long are slept in the worker's invocation (when they fit in it); longer ones go to the queue. */
export const INLINE_RETRY_MS = 2_000;

/** What a failed attempt left: the step's error, and the response when the target answered. */
export type AttemptFailure = { error: RunError; response?: unknown };

/** The retry code of a failed attempt (`undefined`: not a kind of failure a retry can cure). */
export function retryCode(f: AttemptFailure): RetryOn | undefined {
  switch (f.error.code) {
    case 'HTTP_STATUS': {
      const status = (f.response as HttpRequestResult | undefined)?.status ?? 0;
      if (status === 429) return 'HTTP_429';
      if (status >= 500) return 'HTTP_5XX';
      return status >= 400 ? 'HTTP_4XX' : undefined;
    }
    case 'TIMEOUT':
      return 'TIMEOUT';
    case 'REQUEST_FAILED':
    case 'STORAGE_FAILED':
      return 'NETWORK';
    case 'STORAGE_THROTTLED':
      return 'HTTP_429';
    case 'STORAGE_UNAVAILABLE':
      return 'HTTP_5XX';
    case 'RESPONSE_TOO_LARGE':
      return 'RESPONSE_TOO_LARGE';
    default:
      return undefined;
  }
}

/**
 * An artifact's upload that failed in the object store, as a step failure a retry can judge
 * (`STORAGE_THROTTLED`, `STORAGE_UNAVAILABLE`, `STORAGE_FAILED`). Only for a step with a retry
 * policy: without one such a failure stays a worker fault, as before.
 */
export function storageFailure(err: unknown): StepError | undefined {
  if (err instanceof StepError || !(err instanceof Error)) return undefined;
  const status = (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
  if (status === 429 || err.name === 'SlowDown' || err.name === 'ThrottlingException')
    return new StepError('STORAGE_THROTTLED', 'the artifact store throttled the upload');
  if (status !== undefined && status >= 500) return new StepError('STORAGE_UNAVAILABLE', `the artifact store answered ${status}`);
  if (status === undefined) return new StepError('STORAGE_FAILED', 'the artifact upload failed before the store answered');
  return undefined;
}

/** Seconds a 429 or 503's `Retry-After` asks for, if any. */
function retryAfterSeconds(response: unknown, now: number): number | undefined {
  const r = response as HttpRequestResult | undefined;
  if (!r || (r.status !== 429 && r.status !== 503)) return undefined;
  return parseRetryAfter(r.headers?.['retry-after'], now);
}

export type RetryPlan = { attempt: number; code: RetryOn; delayMs: number; error: RunError };

/**
 * Whether the attempt that just failed (number `attempt`, 1-based) is made again, and after how long:
 * `intervalSeconds × backoffRate^(attempt-1)`, capped by `maxDelaySeconds`, with full jitter a uniform
 * draw below that; a 429 or 503's `Retry-After` makes it at least that long (capped the same way).
 */
export function planRetry(
  policy: RetryPolicy | undefined,
  f: AttemptFailure,
  attempt: number,
  now: number,
  random = Math.random,
): RetryPlan | undefined {
  if (!policy || attempt >= policy.maxAttempts) return undefined;
  const code = retryCode(f);
  if (!code || !policy.on.includes(code)) return undefined;
  const capMs = (policy.maxDelaySeconds ?? MAX_RETRY_DELAY_SECONDS) * 1000;
  const backoffMs = Math.min(capMs, policy.intervalSeconds * 1000 * policy.backoffRate ** (attempt - 1));
  const drawnMs = policy.jitter === 'full' ? Math.floor(random() * backoffMs) : backoffMs;
  const after = retryAfterSeconds(f.response, now);
  const delayMs = after === undefined ? drawnMs : Math.max(drawnMs, Math.min(capMs, after * 1000));
  return { attempt, code, delayMs, error: f.error };
}

/**
 * A retry of the step is under way: its state is RUNNING with the next attempt counted. A step run
 * again later (a jump back, the next iteration, a v1 retry) starts again at attempt 1.
 */
export const retryInProgress = (s: StepState | undefined) => s?.status === 'RUNNING' && s.tries !== undefined;
/** The attempt a step is in: 1, or one past the tries its state counts while a retry is under way. */
export const currentAttempt = (s: StepState | undefined) => (retryInProgress(s) ? (s?.tries ?? 1) : 1);

/** The step's state and `step.retrying` data for a planned retry: its next attempt is counted on the run. */
export function retryingState(
  s: StepState,
  plan: RetryPlan,
  iteration: { iteration?: number } = {},
): { state: StepState; data: Record<string, unknown> } {
  return {
    state: { ...s, status: 'RUNNING', attempts: (s.attempts ?? 1) + 1, tries: plan.attempt + 1, error: plan.error },
    data: {
      stepId: s.stepId,
      ...iteration,
      attempt: plan.attempt,
      error: { code: plan.code, stepError: plan.error.code, message: plan.error.message },
      delaySeconds: plan.delayMs / 1000,
    },
  };
}

/** A retried step's output carries `attempts`: how many attempts it took. */
export const withAttempts = (retry: RetryPolicy | undefined, output: unknown, attempts: number) =>
  retry && output !== null && typeof output === 'object' && !Array.isArray(output) ? { ...output, attempts } : output;

/**
 * Record a planned retry on the held run (the step's next attempt counted, `step.retrying` after the
 * failed attempt's `step.started`; inside a for_each, in its iteration, which the run keeps), then wait: in this invocation when the wait is short and fits in
 * `leftMs` beside the next attempt's budget (true: go on with the step), else on the queue (the run
 * is let go with `wakeAt`, as a `delay` step; false).
 */
export async function scheduleRetry(
  run: HeldRun,
  here: Here,
  plan: RetryPlan,
  started: RunEvent,
  room: { leftMs: number; budgetMs: number },
): Promise<boolean> {
  const now = Date.now();
  const current = stateAt(run, here) ?? { stepId: here.step.id, type: here.step.type, status: 'RUNNING' };
  const { state, data } = retryingState({ ...current, startedAt: started.at }, plan, iterationOf(run, here));
  setState(run, here, state);
  run.record([started, newEvent(run.e.executionId, 'step.retrying', data, now)], [], here.loop !== undefined);
  if (plan.delayMs <= INLINE_RETRY_MS && plan.delayMs + room.budgetMs <= room.leftMs) {
    await run.pause(plan.delayMs);
    return true;
  }
  const until = now + plan.delayMs;
  run.update({ wakeAt: until });
  await run.release(until);
  return false;
}
