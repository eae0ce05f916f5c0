import { randomUUID } from 'node:crypto';
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { Context } from 'aws-lambda';
import { ASYNC_INVOKES, ASYNC_RETRY_ATTEMPTS, ASYNC_RETRY_DELAYS_SECONDS, type AsyncFunction } from '../../functions/async-invokes.ts';
import { type FunctionSettings, type Invocation, invoke, lambdaContext } from './lambda.ts';

/** A function invoked asynchronously: its settings, and which entry of ASYNC_INVOKES its event-invoke config is. */
export type AsyncFunctionSettings = FunctionSettings & { config: AsyncFunction };

/**
 * What Lambda sends to an asynchronous invocation's on-failure destination (AWS's record, field for
 * field): the invocation (one request id for every try), why it gave up, the event, and the last try's
 * error (absent when the event grew too old before any try).
 */
export type OnFailureRecord = {
  version: '1.0';
  timestamp: string;
  requestContext: {
    requestId: string;
    functionArn: string;
    condition: 'RetriesExhausted' | 'EventAgeExceeded';
    approximateInvokeCount: number;
  };
  requestPayload: unknown;
  responseContext?: { statusCode: 200; executedVersion: '$LATEST'; functionError: 'Unhandled' };
  responsePayload?: { errorType: string; errorMessage: string; trace?: string[] };
};

export type AsyncOutcome =
  | { status: 'ok'; attempts: number; result: unknown }
  | { status: 'failed'; attempts: number; record: OnFailureRecord }
  /** The local stack stopped while a retry waited: the event is dropped, as a stopped process drops it. */
  | { status: 'cancelled'; attempts: number };

export type AsyncInvokeOptions = {
  /** The waits before the retries, in ms (default: `LOCAL_ASYNC_RETRY_SECONDS`, else AWS's 1 and 2 minutes). */
  retryDelaysMs?: readonly number[];
  /** The on-failure queue (default: `ASYNC_FAILURES_QUEUE_URL`, which the local stack provisions). */
  onFailureQueueUrl?: string;
  /** Cancels the retries still waiting (the local stack's stop). */
  signal?: AbortSignal;
  /** Told of each try as it ends, before any retry is waited for (logs, tests: awaited). */
  onAttempt?: (attempt: number, outcome: Invocation<unknown>) => void | Promise<void>;
  requestId?: string;
};

/**
 * The waits before Lambda's retries: `LOCAL_ASYNC_RETRY_SECONDS` is the first (the second is twice
 * it, as AWS's 1 and 2 minutes); unset, AWS's. Tests and demos set a second or less.
 */
export function retryDelaysMs(env: NodeJS.ProcessEnv = process.env): number[] {
  const raw = env.LOCAL_ASYNC_RETRY_SECONDS;
  if (raw === undefined || raw === '') return ASYNC_RETRY_DELAYS_SECONDS.map((s) => s * 1000);
  const first = Number(raw);
  if (!Number.isFinite(first) || first < 0) throw new Error(`LOCAL_ASYNC_RETRY_SECONDS must be a number of seconds ≥ 0, got ${raw}`);
  return ASYNC_RETRY_DELAYS_SECONDS.map((s) => (s / ASYNC_RETRY_DELAYS_SECONDS[0]) * first * 1000);
}

const sqs = (() => {
  let c: SQSClient | undefined;
  // Lambda's own client, not the functions' (shared/clients.ts): the destination is written by the
  // service with the function's role, outside any invocation.
  return () => (c ??= new SQSClient({}));
})();

/** Lambda's error response of a failed try: the thrown error's name and message, or its timeout. */
function responsePayload(outcome: Exclude<Invocation<unknown>, { status: 'ok' }>, requestId: string, fn: FunctionSettings) {
  if (outcome.status === 'timeout') {
    return {
      errorType: 'Sandbox.Timedout',
      errorMessage: `RequestId: ${requestId} Error: Task timed out after ${fn.timeoutSeconds.toFixed(2)} seconds`,
    };
  }
  const e = outcome.error;
  if (e instanceof Error) return { errorType: e.name, errorMessage: e.message, trace: (e.stack ?? '').split('\n') };
  return { errorType: 'Error', errorMessage: String(e) };
}

/** Waits `ms`, or less if `signal` aborts: true when it waited the whole time. */
export function wait(ms: number, signal?: AbortSignal): Promise<boolean> {
  if (signal?.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const done = (whole: boolean) => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', aborted);
      resolve(whole);
    };
    const aborted = () => done(false);
    const timer = setTimeout(() => done(true), ms);
    timer.unref();
    signal?.addEventListener('abort', aborted, { once: true });
  });
}

/**
 * Invoke a function as Lambda's asynchronous invocation does (InvocationType `Event`: EventBridge
 * Scheduler's fires, an EventBridge rule's ticks): a try as `invoke` makes it (the function's timeout
 * enforced); an error or a timeout is tried again `ASYNC_RETRY_ATTEMPTS` times after the retry waits,
 * under the same request id; when the tries are spent (or the event is older than its maximum age
 * at a retry) the record AWS sends goes to the on-failure queue. The caller does not wait for any of
 * this on AWS; locally the promise settles when the event is done with (for the stack's stop and tests).
 */
export async function invokeAsync<E>(
  fn: AsyncFunctionSettings,
  handler: (event: E, context: Context) => Promise<unknown>,
  event: E,
  opts: AsyncInvokeOptions = {},
): Promise<AsyncOutcome> {
  const requestId = opts.requestId ?? randomUUID();
  const received = Date.now();
  const delays = opts.retryDelaysMs ?? retryDelaysMs();
  const maxAgeMs = ASYNC_INVOKES[fn.config].maxEventAgeSeconds * 1000;
  const functionArn = `${lambdaContext(fn, requestId, 0).invokedFunctionArn}:$LATEST`;
  let attempts = 0;
  let last: Exclude<Invocation<unknown>, { status: 'ok' }> | undefined;
  let condition: OnFailureRecord['requestContext']['condition'] = 'RetriesExhausted';
  for (;;) {
    const outcome = await invoke(fn, handler, event, requestId);
    attempts++;
    await opts.onAttempt?.(attempts, outcome);
    if (outcome.status === 'ok') return { status: 'ok', attempts, result: outcome.result };
    last = outcome;
    if (attempts > ASYNC_RETRY_ATTEMPTS) break;
    const delay = delays[attempts - 1] ?? delays[delays.length - 1] ?? 0;
    if (Date.now() + delay - received > maxAgeMs) {
      condition = 'EventAgeExceeded';
      break;
    }
    console.error(
      `${new Date().toISOString()} ${requestId} ${fn.name}: asynchronous invocation failed (try ${attempts} of ${ASYNC_RETRY_ATTEMPTS + 1}); retried in ${delay / 1000} s`,
    );
    if (!(await wait(delay, opts.signal))) {
      console.error(`${new Date().toISOString()} ${requestId} ${fn.name}: the local stack stopped; its retry is dropped`);
      return { status: 'cancelled', attempts };
    }
  }
  const record: OnFailureRecord = {
    version: '1.0',
    timestamp: new Date().toISOString(),
    requestContext: { requestId, functionArn, condition, approximateInvokeCount: attempts },
    requestPayload: event,
    responseContext: { statusCode: 200, executedVersion: '$LATEST', functionError: 'Unhandled' },
    responsePayload: responsePayload(last, requestId, fn),
  };
  const queueUrl = opts.onFailureQueueUrl ?? process.env.ASYNC_FAILURES_QUEUE_URL;
  console.error(`${new Date().toISOString()} ${requestId} ${fn.name}: asynchronous invocation dropped (${condition}, ${attempts} tries)`);
  // A destination that cannot be written loses the record, as on AWS (the events-dropped metric still counts it).
  if (queueUrl)
    await sqs()
      .send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: JSON.stringify(record) }))
      .catch((e: unknown) => console.error(`${requestId} ${fn.name}: its on-failure record could not be sent`, e));
  return { status: 'failed', attempts, record };
}
