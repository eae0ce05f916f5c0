// The runs worker's part of `wait_for_callback`: the step's `request`, sent with the step engine. Kept
// out of wait-for-callback.ts, which the callback routes load: they then carry no step engine. (A
// dynamic import of steps.ts from there made esbuild keep every DynamoDB command in the runs
// worker's bundle, 42 KiB.)
import type { RunError } from '../../db/entities/execution-state.ts';
import type { Execution } from '../../db/entities/execution.ts';
import { logger } from '../../logger.ts';
import type { HttpRequestStep, WaitForCallbackStep } from '../definition.ts';
import { StepError } from '../../step-error.ts';
import { runStep, scopeOf } from '../steps.ts';
import { type CallbackWait, settleCallback } from './wait-for-callback.ts';

/**
 * Send the step's `request` once, after the callback and the wait are written (so an answer that comes
 * at once finds the run waiting). The run is not held meanwhile. A request that fails (not 2xx, no
 * answer, refused by the address checks) reports the callback as failed with its error, unless a
 * report came first. A crash between the wait's write and the request leaves it unsent: the wait
 * then ends at its deadline.
 */
export async function sendCallbackRequest(e: Execution, step: WaitForCallbackStep, w: CallbackWait, maxMs: number) {
  if (!step.request) return;
  const request = { id: step.id, type: 'http_request', allowFailure: false, ...step.request } as HttpRequestStep;
  let failure: RunError | undefined;
  try {
    const scope = { ...scopeOf(e), callback: { url: w.url, token: w.token } };
    const outcome = await runStep(request, { execution: e, scope, signal: new AbortController().signal, now: Date.now(), maxMs });
    if (outcome.kind === 'failed') failure = outcome.error;
  } catch (err) {
    if (!(err instanceof StepError)) logger.error('callback request failed', { executionId: e.executionId, error: err as Error });
    failure =
      err instanceof StepError ? { code: err.code, message: err.message } : { code: 'REQUEST_FAILED', message: 'the request failed' };
  }
  if (!failure) return;
  const error = { code: failure.code, message: `The callback request failed: ${failure.message}`.slice(0, 1000) };
  await settleCallback(w.callback, { status: 'FAILED', error }, Date.now());
}
