import { randomUUID } from 'node:crypto';
import type { Context } from 'aws-lambda';
import type { Worker } from '../../functions/bindings.ts';
import { type FunctionGrant, grantsOfWorker } from '../iam.ts';
import { planCut } from './faults.ts';
import { identityOf, runAs } from './iam.ts';

/**
 * A function's settings as Lambda knows them (the CDK stack sets the same ones), with its grants: its
 * role's policy, which every SDK call of an invocation is checked against (infra/local/iam.ts). Only a
 * test's stand-in for a worker has none: its calls are the test's own, not a function's.
 */
export type FunctionSettings = { name: string; timeoutSeconds: number; memoryMb?: number; grants?: readonly FunctionGrant[] };

/** A worker's, sweep's or the schedule fire's function, named as the stack names it, with its grants. */
export const workerFunction = (w: Worker, timeoutSeconds: number): FunctionSettings => ({
  name: w.replace(/\//g, '-'),
  timeoutSeconds,
  grants: grantsOfWorker(w),
});

/** What Lambda reports of an invocation whose runtime died (an out-of-memory kill). */
const crashed = () => Object.assign(new Error('Runtime exited with error: signal: killed'), { name: 'Runtime.ExitError' });

/** How one invocation ended: its result, its error, or Lambda's timeout. */
export type Invocation<R> = { status: 'ok'; result: R } | { status: 'error'; error: unknown } | { status: 'timeout' };

/** The Lambda context of one invocation: its remaining time counts down to the function's timeout. */
export function lambdaContext(fn: FunctionSettings, requestId: string, deadline: number): Context {
  return {
    awsRequestId: requestId,
    functionName: fn.name,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:${fn.name}`,
    memoryLimitInMB: String(fn.memoryMb ?? 256),
    logGroupName: `/aws/lambda/${fn.name}`,
    logStreamName: 'local',
    callbackWaitsForEmptyEventLoop: false,
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

/**
 * Invoke a handler as Lambda does: with a context whose remaining time ends at the function's
 * timeout, and no longer than that. Lambda stops a function that overruns; a JS promise cannot be
 * stopped, so an overrunning handler is abandoned instead: the caller gets `timeout` at once (and
 * treats the invocation as failed, as Lambda's callers do), the handler's promise runs on unobserved
 * but every AWS call it makes from then on fails (so it changes nothing more, as a stopped function
 * changes nothing), and the log gets Lambda's "Task timed out" line. Every AWS call of the invocation
 * is checked against the function's grants (infra/local/iam.ts). With `FAULTS`' `lambda.crash` or
 * `lambda.timeout` (infra/local/faults.ts), an invocation may stop part-way: before one of its AWS calls
 * (that call and every later one fail) or as it ends (its answer is lost); the caller gets Lambda's
 * `Runtime.ExitError` or its timeout, at once (a timeout is not waited out: what is cut off is the point).
 */
export async function invoke<E, R>(
  fn: FunctionSettings,
  handler: (event: E, context: Context) => Promise<R>,
  event: E,
  requestId: string = randomUUID(),
): Promise<Invocation<R>> {
  const started = Date.now();
  const timeoutMs = fn.timeoutSeconds * 1000;
  const context = lambdaContext(fn, requestId, started + timeoutMs);
  const identity = fn.grants ? identityOf(fn.name, fn.grants) : undefined;
  let timer: NodeJS.Timeout | undefined;
  let timerFired = false;
  const timedOut = new Promise<Invocation<R>>((resolve) => {
    timer = setTimeout(() => {
      timerFired = true;
      resolve({ status: 'timeout' });
    }, timeoutMs);
  });
  // Whether it stops part-way (FAULTS); the health route reports the faults and is not subject to them.
  const cut = identity && fn.name !== 'http-health-get' ? planCut(identity) : undefined;
  const stopped = cut?.reached.then(
    (kind): Invocation<R> => (kind === 'timeout' ? { status: 'timeout' } : { status: 'error', error: crashed() }),
  );
  // Settled either way, so an abandoned handler that fails later is no unhandled rejection.
  const ran = Promise.resolve()
    .then(() => (identity ? runAs(identity, () => handler(event, context)) : handler(event, context)))
    .then(
      (result): Invocation<R> => ({ status: 'ok', result }),
      (error: unknown): Invocation<R> => ({ status: 'error', error }),
    );
  try {
    let outcome = await Promise.race([ran, timedOut, ...(stopped ? [stopped] : [])]);
    // Chosen to stop: where it stopped (or, if it ended first, as it ends: its answer is lost).
    if (cut && stopped && !timerFired) {
      cut.end();
      outcome = await stopped;
      if (outcome.status === 'error')
        console.error(
          `${new Date().toISOString()} ${requestId} ${fn.name}: Runtime exited with error: signal: killed (FAULTS lambda.crash)`,
        );
    }
    if (outcome.status === 'timeout') {
      // Lambda stops it here: the abandoned handler's later SDK calls fail (infra/local/iam.ts).
      if (identity) identity.ended = 'timeout';
      const seconds = ((Date.now() - started) / 1000).toFixed(2);
      console.error(`${new Date().toISOString()} ${requestId} Task timed out after ${seconds} seconds (${fn.name}, abandoned locally)`);
    }
    return outcome;
  } finally {
    clearTimeout(timer);
  }
}
