import { PRICES } from './prices.ts';

/**
 * What AWS bills for one run, from what the bench counted and measured (`./cost.ts`): each line is a
 * quantity per run times its list price (`./prices.ts`), printed per million runs.
 */
export type Usage = {
  /** Lambda invocations per run (a trigger's one, a worker batch's share), and their billed GB-seconds. */
  lambdaInvocations: number;
  lambdaGbSeconds: number;
  httpApiRequests: number;
  sqsRequests: number;
  writeUnits: number;
  readUnits: number;
  s3Puts: number;
  s3Gets: number;
  /** Bytes of log events ingested (our lines, EMF metric lines, Lambda's START/END/REPORT), and how many events. */
  logBytes: number;
  logEvents: number;
  kmsRequests: number;
  secretsManagerCalls: number;
};

export type Bill = Record<'lambda' | 'apiGateway' | 'sqs' | 'dynamodb' | 's3' | 'logs' | 'kmsAndSecrets' | 'total', number>;

const PER_MILLION = 1e6;
/** CloudWatch Logs counts this much per event on top of its text. */
export const LOG_EVENT_OVERHEAD_BYTES = 26;

/** Dollars per million runs of `u`. */
export function billPerMillion(u: Usage): Bill {
  const p = PRICES;
  const lambda = u.lambdaInvocations * p.lambda.request + u.lambdaGbSeconds * p.lambda.gbSecondArm;
  const apiGateway = u.httpApiRequests * p.httpApiRequest;
  const sqs = u.sqsRequests * p.sqsRequest;
  const dynamodb = u.writeUnits * p.dynamodb.writeUnit + u.readUnits * p.dynamodb.readUnit;
  const s3 = u.s3Puts * p.s3.put + u.s3Gets * p.s3.get;
  const logs = ((u.logBytes + u.logEvents * LOG_EVENT_OVERHEAD_BYTES) / 1024 ** 3) * p.logsIngestGb;
  const kmsAndSecrets = u.kmsRequests * p.kmsRequest + u.secretsManagerCalls * p.secretsManagerCall;
  const lines = { lambda, apiGateway, sqs, dynamodb, s3, logs, kmsAndSecrets };
  const perMillion = Object.fromEntries(Object.entries(lines).map(([k, v]) => [k, v * PER_MILLION])) as Omit<Bill, 'total'>;
  return { ...perMillion, total: Object.values(perMillion).reduce((a, b) => a + b, 0) };
}

/** Lambda bills each invocation's duration rounded up to the millisecond, at its memory. */
export const gbSeconds = (durationMs: number, memoryMb: number) => (Math.ceil(durationMs) / 1000) * (memoryMb / 1024);

/**
 * The same workflow on Step Functions, per million runs, at list prices, started by the same HTTP API
 * (one request each): Standard bills each state transition (a state machine of n states has n + 1:
 * its start and each state's exit count as AWS's examples do; we count n + 1 to be fair to it, the
 * Pass states doing what our `set` steps do); Express bills the request and its duration at 64 MB in
 * 100 ms steps (a machine of Pass states ends within the first).
 */
export function stepFunctionsPerMillion(states: number, expressDurationMs = 100) {
  const p = PRICES;
  const api = p.httpApiRequest * PER_MILLION;
  const standard = (states + 1) * p.stepFunctions.standardTransition * PER_MILLION + api;
  const billedSeconds = Math.ceil(expressDurationMs / 100) / 10;
  const express = (p.stepFunctions.expressRequest + billedSeconds * (64 / 1024) * p.stepFunctions.expressGbSecond) * PER_MILLION + api;
  return { standard, express };
}
