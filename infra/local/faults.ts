import type { Pluggable } from '@smithy/types';
import { setHealthReport } from '../../shared/health-report.ts';
import type { FaultKind, Faults } from './fault-kinds.ts';
import { currentInvocation, type Invocation, invocationEnded } from './iam.ts';

/**
 * Faults as AWS raises them, on request (`FAULTS`, docs/local-mode.md): a comma-separated list of
 * `kind:probability`. Only what a function does while it handles an invocation is faulted (an SDK call
 * made in `currentInvocation()`, a message the event source hands to a worker, an invocation of a
 * function); a test's own setup calls and the operator's CLI never are. Every injected fault is
 * counted by kind, and `GET /api/health` answers the counts (`faults`) while `FAULTS` is set.
 *
 * - `dynamodb.throttle`, `dynamodb.error`, `s3.slowdown`: an attempt of an SDK call answers the
 *   service's own error response (status, headers, body), which the SDK's deserializer turns into the
 *   error it throws for AWS's; the fault sits below the SDK's retry middleware, so its retry strategy
 *   sees each faulted attempt as it sees AWS's (throttling or transient: retried with its backoff, up
 *   to its attempts, then thrown to the function).
 * - `sqs.duplicate`, `sqs.delay`: the event source hands a received message to the worker twice, or
 *   alone, up to a few seconds later than the rest of its batch (infra/local/poller.ts).
 * - `lambda.crash`, `lambda.timeout`: the invocation stops part-way, before one of its SDK calls (or
 *   after its last, before it answers): that call and every later one fail, and the invoker gets the
 *   error (`Runtime.ExitError`) or the timeout Lambda reports (infra/local/lambda.ts).
 */

export { FAULT_KINDS, type FaultKind, type Faults, parseFaults } from './fault-kinds.ts';

let active: Faults | undefined;
const counts = new Map<FaultKind, number>();
let random: () => number = Math.random;

/** Inject `faults` from now on (undefined: none; the health route stops reporting counts). Counts restart. */
export function configureFaults(faults: Faults | undefined) {
  active = faults;
  counts.clear();
  chances.clear();
  setHealthReport(faults ? () => ({ faults: faultCounts() }) : undefined);
}

/** The faults injected so far, by kind (every kind `FAULTS` names, 0 if none yet). */
export const faultCounts = (): Partial<Record<FaultKind, number>> =>
  Object.fromEntries(Object.keys(active ?? {}).map((k) => [k, counts.get(k as FaultKind) ?? 0]));

/** Tests: the random source of every choice (default `Math.random`). */
export const setFaultRandom = (r: () => number) => {
  random = r;
};

/** The chances each kind has had to happen, since `configureFaults`. */
const chances = new Map<FaultKind, number>();

/**
 * Whether a fault of `kind` happens now (counted if so). A kind that has not happened in its first
 * 1/p chances (what it takes on average) happens at the next: a short soak (a test's) injects every
 * kind it names, even one with few chances (S3's: a call per artifact), whatever the draws.
 */
function roll(kind: FaultKind): boolean {
  const p = active?.[kind];
  if (!p) return false;
  const seen = (chances.get(kind) ?? 0) + 1;
  chances.set(kind, seen);
  const overdue = !counts.has(kind) && seen > Math.ceil(1 / p);
  if (!overdue && random() >= p) return false;
  counts.set(kind, (counts.get(kind) ?? 0) + 1);
  return true;
}

const json = (status: number, type: string, message: string) => ({
  statusCode: status,
  headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amzn-errortype': type, 'x-amzn-requestid': 'local-fault' },
  body: new TextEncoder().encode(JSON.stringify({ __type: type, message })),
});

/** The service's own answer to one attempt, as AWS sends it when it throttles or fails. */
function faultResponse(client: string, method: string) {
  if (client === 'DynamoDBClient') {
    if (roll('dynamodb.throttle'))
      // Provisioned capacity exceeded, or (on-demand tables) the table's or account's throughput limit.
      return random() < 0.5
        ? json(
            400,
            'com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException',
            'The level of configured provisioned throughput for the table was exceeded. Consider increasing your provisioning level with the UpdateTable API.',
          )
        : json(
            400,
            'com.amazonaws.dynamodb.v20120810#ThrottlingException',
            'Throughput exceeds the current capacity for one or more global secondary indexes.',
          );
    if (roll('dynamodb.error')) return json(500, 'com.amazonaws.dynamodb.v20120810#InternalServerError', 'Internal server error');
  }
  if (client === 'S3Client' && roll('s3.slowdown')) {
    const body =
      method === 'HEAD'
        ? ''
        : '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message><RequestId>local-fault</RequestId><HostId>local</HostId></Error>';
    return {
      statusCode: 503,
      headers: { 'content-type': 'application/xml', 'x-amz-request-id': 'local-fault' },
      body: new TextEncoder().encode(body),
    };
  }
  return undefined;
}

/** Where an invocation chosen to stop part-way stops: before its SDK call number `at` (0-based), or at its end. */
type Cut = { kind: 'crash' | 'timeout'; at: number; calls: number; reach: () => void; reached: Promise<'crash' | 'timeout'> };
const cuts = new WeakMap<Invocation, Cut>();
/** The most SDK calls an invocation chosen to stop part-way makes before it stops (fewer, if it ends first). */
const MAX_CALLS_BEFORE_CUT = 12;

/**
 * Whether `invocation` (just starting) crashes or times out part-way (`lambda.crash`, `lambda.timeout`);
 * if so, its `reached` settles when it stops: before one of its SDK calls, or, with `end()`, as it ends.
 */
export function planCut(invocation: Invocation): { reached: Promise<'crash' | 'timeout'>; end: () => void } | undefined {
  const kind = roll('lambda.crash') ? 'crash' : roll('lambda.timeout') ? 'timeout' : undefined;
  if (!kind) return undefined;
  let reach: () => void = () => undefined;
  const reached = new Promise<'crash' | 'timeout'>((resolve) => {
    reach = () => {
      invocation.ended ??= kind;
      resolve(kind);
    };
  });
  const cut: Cut = { kind, at: Math.floor(random() * (MAX_CALLS_BEFORE_CUT + 1)), calls: 0, reach, reached };
  cuts.set(invocation, cut);
  return { reached, end: reach };
}

/**
 * The SDK plugin of the SDK-level kinds: each attempt of a call made in an invocation may be answered by
 * the fault instead of the emulator (in the deserialize step, below the retry middleware: every attempt
 * passes through it); each call of an invocation chosen to stop part-way counts towards its stop.
 */
export const faultsPlugin: Pluggable<any, any> = {
  applyToStack: (stack) => {
    stack.add(
      (next) => async (args) => {
        const invocation = currentInvocation();
        const cut = invocation && cuts.get(invocation);
        if (invocation && cut && !invocation.ended && cut.calls++ >= cut.at) {
          cut.reach();
          throw invocationEnded(invocation);
        }
        return next(args);
      },
      { step: 'initialize', name: 'localInvocationCut', priority: 'low', override: true },
    );
    stack.add(
      (next, context) => async (args) => {
        if (!active || !currentInvocation()) return next(args);
        const request = args.request as { method?: string } | undefined;
        const response = faultResponse(String(context.clientName ?? ''), String(request?.method ?? ''));
        return response ? { response, output: undefined as never } : next(args);
      },
      { step: 'deserialize', name: 'localFaults', priority: 'low', override: true },
    );
  },
};

/** How the event source hands over one received batch: these now, each of those alone after its wait. */
export type Deliveries<M> = { now: M[]; later: { message: M; afterMs: number }[] };
/** The longest an `sqs.delay` holds a message back. */
export const SQS_DELAY_MAX_MS = 5_000;

/** `sqs.duplicate` (a second delivery, up to 2 s later) and `sqs.delay` (alone, up to 5 s later) on a received batch. */
export function planDeliveries<M>(messages: readonly M[]): Deliveries<M> {
  const out: Deliveries<M> = { now: [], later: [] };
  for (const m of messages) {
    if (roll('sqs.delay')) out.later.push({ message: m, afterMs: 500 + Math.floor(random() * (SQS_DELAY_MAX_MS - 500)) });
    else out.now.push(m);
    if (roll('sqs.duplicate')) out.later.push({ message: m, afterMs: Math.floor(random() * 2_000) });
  }
  return out;
}
