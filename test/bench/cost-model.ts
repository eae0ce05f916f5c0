import { PRICES } from './prices.ts';

/**
 * What AWS bills for one run, from what the bench counted and measured (`./cost.ts`): each line is a
 * quantity per run times its list price (`./prices.ts`), printed per million runs; and what a stage
 * costs a month whether it runs anything or not (`fixedMonthly`), from its synthesized template.
 */
export type Usage = {
  /** Lambda invocations per run (a trigger's one, a worker batch's share), and their billed GB-seconds. */
  lambdaInvocations: number;
  lambdaGbSeconds: number;
  /** Billed INIT GB-seconds per run: each hot function's measured INIT, at its memory, times the cold-start rate of its invocations. */
  initGbSeconds: number;
  httpApiRequests: number;
  sqsRequests: number;
  writeUnits: number;
  readUnits: number;
  /** GB-months the run's items are stored for (to their TTL), table items and index entries apart (PITR bills the table's alone). */
  tableGbMonths: number;
  indexGbMonths: number;
  s3Puts: number;
  s3Gets: number;
  /** Bytes of log events ingested (our lines, EMF metric lines, Lambda's START/END/REPORT), and how many events. */
  logBytes: number;
  logEvents: number;
  /** The HTTP API's access log line per request, and its events. */
  accessLogBytes: number;
  accessLogEvents: number;
  /** GB-months the log events are kept (the log groups' retention). */
  logGbMonths: number;
  kmsRequests: number;
  secretsManagerCalls: number;
};

/** No use at all (a base to spread quantities over). */
export const NO_USAGE: Usage = {
  lambdaInvocations: 0,
  lambdaGbSeconds: 0,
  initGbSeconds: 0,
  httpApiRequests: 0,
  sqsRequests: 0,
  writeUnits: 0,
  readUnits: 0,
  tableGbMonths: 0,
  indexGbMonths: 0,
  s3Puts: 0,
  s3Gets: 0,
  logBytes: 0,
  logEvents: 0,
  accessLogBytes: 0,
  accessLogEvents: 0,
  logGbMonths: 0,
  kmsRequests: 0,
  secretsManagerCalls: 0,
};

export type Bill = Record<
  'lambda' | 'init' | 'apiGateway' | 'sqs' | 'dynamodb' | 'storage' | 's3' | 'logs' | 'accessLog' | 'kmsAndSecrets' | 'total',
  number
>;

const PER_MILLION = 1e6;
const GB = 1024 ** 3;
/** CloudWatch Logs counts this much per event on top of its text. */
export const LOG_EVENT_OVERHEAD_BYTES = 26;
/** DynamoDB counts this much per item and per index entry on top of its attributes, for storage. */
export const ITEM_STORAGE_OVERHEAD_BYTES = 100;
/** A month as AWS bills by the hour: 730 hours. */
export const MONTH_MS = 730 * 3600 * 1000;

const ingested = (bytes: number, events: number) => ((bytes + events * LOG_EVENT_OVERHEAD_BYTES) / GB) * PRICES.cloudwatch.logsIngestGb;

/** Dollars per million runs of `u`. */
export function billPerMillion(u: Usage): Bill {
  const p = PRICES;
  const lambda = u.lambdaInvocations * p.lambda.request + u.lambdaGbSeconds * p.lambda.gbSecondArm;
  const init = u.initGbSeconds * p.lambda.gbSecondArm;
  const apiGateway = u.httpApiRequests * p.httpApiRequest;
  const sqs = u.sqsRequests * p.sqsRequest;
  const dynamodb = u.writeUnits * p.dynamodb.writeUnit + u.readUnits * p.dynamodb.readUnit;
  const storage = (u.tableGbMonths + u.indexGbMonths) * p.dynamodb.storageGbMonth + u.tableGbMonths * p.dynamodb.pitrGbMonth;
  const s3 = u.s3Puts * p.s3.put + u.s3Gets * p.s3.get;
  const logs = ingested(u.logBytes, u.logEvents) + u.logGbMonths * p.cloudwatch.logsStorageGbMonth;
  const accessLog = ingested(u.accessLogBytes, u.accessLogEvents);
  const kmsAndSecrets = u.kmsRequests * p.kms.request + u.secretsManagerCalls * p.secretsManager.call;
  const lines = { lambda, init, apiGateway, sqs, dynamodb, storage, s3, logs, accessLog, kmsAndSecrets };
  const perMillion = Object.fromEntries(Object.entries(lines).map(([k, v]) => [k, v * PER_MILLION])) as Omit<Bill, 'total'>;
  return { ...perMillion, total: Object.values(perMillion).reduce((a, b) => a + b, 0) };
}

/** Lambda bills each invocation's duration rounded up to the millisecond, at its memory. */
export const gbSeconds = (durationMs: number, memoryMb: number) => (Math.ceil(durationMs) / 1000) * (memoryMb / 1024);

/** GB-months of `bytes` kept `ms` long. */
export const gbMonths = (bytes: number, ms: number) => (bytes / GB) * (ms / MONTH_MS);

/**
 * The same workflow on Step Functions, per million runs, at list prices, started by the same HTTP API
 * (one request each). Standard bills a state transition each time a state is executed, each retry
 * one more: `transitions` is the run's executed steps (for_each iterations and attempts each
 * count; the Pass, Task and Choice states doing what our steps do). Express bills the request and
 * its duration at 64 MB in 100 ms steps (a machine of Pass states ends within the first).
 */
export function stepFunctionsPerMillion(transitions: number, expressDurationMs = 100) {
  const p = PRICES;
  const api = p.httpApiRequest * PER_MILLION;
  const standard = transitions * p.stepFunctions.standardTransition * PER_MILLION + api;
  const billedSeconds = Math.ceil(expressDurationMs / 100) / 10;
  const express = (p.stepFunctions.expressRequest + billedSeconds * (64 / 1024) * p.stepFunctions.expressGbSecond) * PER_MILLION + api;
  return { standard, express };
}

/**
 * What a stage bills a month whatever it runs, from what its template holds (`./cost-fixed.ts` reads
 * it): dashboards, alarms by the metrics they watch, custom metrics, secrets, keys, the scheduled
 * rules' invocations (each priced as the measured invocation of its target), and the queues' idle
 * long polls by their event source mappings.
 */
export type Fixed = {
  dashboards: number;
  /** Metrics watched by standard- and high-resolution alarms, and composite alarms. */
  alarmMetrics: number;
  highResolutionAlarmMetrics: number;
  compositeAlarms: number;
  customMetrics: number;
  secrets: number;
  kmsKeys: number;
  /** Per scheduled rule: invocations a month and the measured dollars of one invocation. */
  schedules: { name: string; perMonth: number; dollarsEach: number }[];
  /** SQS receive requests a month of the event source mappings' idle pollers. */
  idlePolls: number;
};

export type FixedLine = { what: string; quantity: number; monthly: number };

export function fixedMonthly(f: Fixed): { lines: FixedLine[]; total: number } {
  const p = PRICES;
  const lines: FixedLine[] = [
    { what: 'CloudWatch dashboards', quantity: f.dashboards, monthly: f.dashboards * p.cloudwatch.dashboardMonth },
    {
      what: 'CloudWatch alarms (metrics watched)',
      quantity: f.alarmMetrics + f.highResolutionAlarmMetrics + f.compositeAlarms,
      monthly:
        f.alarmMetrics * p.cloudwatch.alarmMetricMonth +
        f.highResolutionAlarmMetrics * p.cloudwatch.highResolutionAlarmMetricMonth +
        f.compositeAlarms * p.cloudwatch.compositeAlarmMonth,
    },
    { what: 'custom metrics (EMF)', quantity: f.customMetrics, monthly: f.customMetrics * p.cloudwatch.customMetricMonth },
    { what: 'Secrets Manager secrets', quantity: f.secrets, monthly: f.secrets * p.secretsManager.secretMonth },
    { what: 'KMS keys', quantity: f.kmsKeys, monthly: f.kmsKeys * p.kms.keyMonth },
    ...f.schedules.map((s) => ({
      what: `${s.name} (invocations)`,
      quantity: s.perMonth,
      monthly: s.perMonth * (s.dollarsEach + p.eventBridgeScheduledRuleInvocation),
    })),
    { what: "queues' idle long polls (requests)", quantity: f.idlePolls, monthly: f.idlePolls * p.sqsRequest },
  ];
  return { lines, total: lines.reduce((n, l) => n + l.monthly, 0) };
}

/** A month's fixed cost spread over `runsPerMonth`, per million runs. */
export const fixedPerMillion = (monthly: number, runsPerMonth: number) => (monthly / runsPerMonth) * PER_MILLION;
