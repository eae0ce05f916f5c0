import type { _Record } from '@aws-sdk/client-dynamodb-streams';
import type { DynamoDBRecord } from 'aws-lambda';

/**
 * What Lambda's DynamoDB event source does to a stream record before the function sees it: the record
 * as Lambda sends it (JSON: `ApproximateCreationDateTime` in epoch seconds, binary values base64, the
 * stream's ARN as `eventSourceARN`), and its event filtering (`FilterCriteria`), which is applied to
 * that JSON. Used by the local stream poller (infra/local/stream-poller.ts).
 */

/** A value as Lambda's JSON has it: binary (Uint8Array in the SDK) as base64, dates as epoch seconds. */
function lambdaJson(value: unknown): unknown {
  if (value instanceof Uint8Array) return Buffer.from(value).toString('base64');
  if (value instanceof Date) return Math.floor(value.getTime() / 1000);
  if (Array.isArray(value)) return value.map(lambdaJson);
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).flatMap(([k, v]) => (v === undefined ? [] : [[k, lambdaJson(v)]])));
  return value;
}

/** A record of the stream as Lambda hands it to the function (AWS: "Example DynamoDB Streams record event"). */
export function lambdaRecord(record: _Record, streamArn: string, region: string): DynamoDBRecord {
  return {
    ...(lambdaJson(record) as DynamoDBRecord),
    // DynamoDB Local names its own region (`ddblocal`); the table's is the stack's.
    awsRegion: region,
    eventSourceARN: streamArn,
  };
}

/** What Lambda sends to a stream mapping's on-failure destination: the failed batch's place in the stream, not its records. */
export type StreamFailureRecord = {
  requestContext: { requestId: string; functionArn: string; condition: 'RetryAttemptsExhausted'; approximateInvokeCount: number };
  responseContext: { statusCode: 200; executedVersion: '$LATEST'; functionError?: 'Unhandled' };
  version: '1.0';
  timestamp: string;
  DDBStreamBatchInfo: {
    shardId: string;
    startSequenceNumber: string;
    endSequenceNumber: string;
    approximateArrivalOfFirstRecord: string;
    approximateArrivalOfLastRecord: string;
    batchSize: number;
    streamArn: string;
  };
};

type Rule = string | number | boolean | null | Record<string, unknown>;

/** Whether `value` (a field of the event, absent: undefined) matches one rule of a filter's list. */
function ruleMatches(rule: Rule, value: unknown): boolean {
  if (rule === null || typeof rule !== 'object') return Array.isArray(value) ? value.includes(rule) : value === rule;
  const [op, arg] = Object.entries(rule)[0] ?? [];
  const one = (v: unknown): boolean => {
    switch (op) {
      case 'prefix':
        return typeof v === 'string' && typeof arg === 'string' && v.startsWith(arg);
      case 'suffix':
        return typeof v === 'string' && typeof arg === 'string' && v.endsWith(arg);
      case 'equals-ignore-case':
        return typeof v === 'string' && typeof arg === 'string' && v.toLowerCase() === arg.toLowerCase();
      case 'anything-but':
        return v !== undefined && !(Array.isArray(arg) ? arg : [arg]).includes(v);
      default:
        throw new Error(`filter rule ${JSON.stringify(rule)}: the local stream poller does not know "${op}"`);
    }
  };
  if (op === 'exists') return arg === (value !== undefined);
  return Array.isArray(value) ? value.some(one) : one(value);
}

/** Whether an event matches one filter pattern (Lambda's event filtering: every key of the pattern must match). */
export function matchesPattern(pattern: Record<string, unknown>, event: unknown): boolean {
  const fields = event !== null && typeof event === 'object' && !Array.isArray(event) ? (event as Record<string, unknown>) : {};
  return Object.entries(pattern).every(([key, p]) =>
    Array.isArray(p)
      ? p.some((rule: Rule) => ruleMatches(rule, fields[key]))
      : p !== null && typeof p === 'object' && matchesPattern(p as Record<string, unknown>, fields[key]),
  );
}

/** Lambda's `FilterCriteria`: an event goes to the function when it matches any of the patterns (no patterns: every event). */
export const matchesFilters = (patterns: readonly Record<string, unknown>[], event: unknown) =>
  patterns.length === 0 || patterns.some((p) => matchesPattern(p, event));

/** Throws at once for a rule the local poller cannot evaluate (it would rather refuse than let records through wrongly). */
export function checkPattern(pattern: Record<string, unknown>): void {
  for (const p of Object.values(pattern)) {
    if (Array.isArray(p)) for (const rule of p) ruleMatches(rule as Rule, undefined);
    else if (p !== null && typeof p === 'object') checkPattern(p as Record<string, unknown>);
    else throw new Error(`filter pattern value ${JSON.stringify(p)}: a pattern's values are lists of rules or patterns`);
  }
}

/** Stream sequence numbers compare as numbers (DynamoDB's are decimal strings of up to 40 digits). */
export const compareSequenceNumbers = (a: string, b: string) => {
  const [x, y] = [BigInt(a), BigInt(b)];
  return x < y ? -1 : x > y ? 1 : 0;
};
