import { describe, expect, it } from 'vitest';
import {
  billPerMillion,
  type Fixed,
  fixedMonthly,
  fixedPerMillion,
  gbMonths,
  gbSeconds,
  LOG_EVENT_OVERHEAD_BYTES,
  MONTH_MS,
  NO_USAGE,
  stepFunctionsPerMillion,
  type Usage,
} from './cost-model.ts';
import { accessLogLine, fixedOfTemplate, IDLE_POLLERS, invocationsPerMonth, TRIGGER_REJECT_CODES } from './cost-fixed.ts';
import { writeParts } from './write-units.ts';
import { PRICES } from './prices.ts';

// The cost model's arithmetic (`npm run bench -- cost`): quantities per run × list prices, per million runs.

const none: Usage = NO_USAGE;

describe('the bill per million runs', () => {
  it('prices each line by its own list price, and totals them', () => {
    const bill = billPerMillion({ ...none, writeUnits: 10, readUnits: 4, lambdaInvocations: 1, lambdaGbSeconds: 0.01, httpApiRequests: 1 });
    expect(bill.dynamodb).toBeCloseTo(10 * 0.625 + 4 * 0.125, 6);
    expect(bill.lambda).toBeCloseTo(0.2 + 0.01 * PRICES.lambda.gbSecondArm * 1e6, 6);
    expect(bill.apiGateway).toBeCloseTo(1, 6);
    expect(bill.sqs).toBe(0);
    expect(bill.total).toBeCloseTo(bill.dynamodb + bill.lambda + bill.apiGateway, 6);
  });

  it('bills log ingestion by the byte, each event with its overhead', () => {
    const gb = 1024 ** 3;
    // A million runs of 1,074 bytes in one event each: about 1 GB with the overhead.
    const perRun = gb / 1e6 - LOG_EVENT_OVERHEAD_BYTES;
    expect(billPerMillion({ ...none, logBytes: perRun, logEvents: 1 }).logs).toBeCloseTo(PRICES.cloudwatch.logsIngestGb, 6);
    expect(billPerMillion({ ...none, logBytes: 0, logEvents: 1 }).logs).toBeGreaterThan(0);
  });

  it('counts Lambda duration rounded up to the millisecond at the memory size', () => {
    expect(gbSeconds(10.2, 1024)).toBeCloseTo(0.011, 9);
    expect(gbSeconds(10, 256)).toBeCloseTo(0.0025, 9);
  });

  it('prices Step Functions beside it: Standard by the states executed (one transition each), Express by request and 100 ms at 64 MB', () => {
    // One Pass state run once: one transition ($25 a million) and the HTTP API's request ($1); not states + 1.
    const one = stepFunctionsPerMillion(1);
    expect(one.standard).toBeCloseTo(25 + 1, 6);
    expect(one.express).toBeCloseTo(1 + 0.1 * (64 / 1024) * 16.67 + 1, 3);
    expect(stepFunctionsPerMillion(5).standard).toBeCloseTo(5 * 25 + 1, 6);
    expect(stepFunctionsPerMillion(1, 250).express).toBeGreaterThan(one.express);
  });

  it('bills storage to the TTL, table items and index entries, and point-in-time recovery on the table items alone', () => {
    // 1 GB kept one month in the table: storage and PITR; in an index: storage only.
    const table = billPerMillion({ ...none, tableGbMonths: 1e-6 });
    expect(table.storage).toBeCloseTo(PRICES.dynamodb.storageGbMonth + PRICES.dynamodb.pitrGbMonth, 9);
    expect(billPerMillion({ ...none, indexGbMonths: 1e-6 }).storage).toBeCloseTo(PRICES.dynamodb.storageGbMonth, 9);
    // 2 KB kept 90 days, a million times: about 5.5 GB-months.
    expect(gbMonths(2048, 90 * 86_400_000) * 1e6).toBeCloseTo((2048 * 1e6 * (90 * 24)) / 730 / 1024 ** 3, 6);
    expect(gbMonths(1024 ** 3, MONTH_MS)).toBe(1);
  });

  it('bills INIT at the Lambda duration rate, and the access log by its own bytes and events', () => {
    expect(billPerMillion({ ...none, initGbSeconds: 0.001 }).init).toBeCloseTo(0.001 * PRICES.lambda.gbSecondArm * 1e6, 9);
    const access = billPerMillion({ ...none, accessLogBytes: 400, accessLogEvents: 1 });
    expect(access.accessLog).toBeCloseTo(((426 * 1e6) / 1024 ** 3) * 0.5, 6);
    expect(access.total).toBeCloseTo(access.accessLog, 9);
    expect(access.logs).toBe(0);
  });
});

describe('what a transaction writes to an index', () => {
  it("bills a transaction's index entries once (standard writes), its items twice", () => {
    const before = undefined;
    const after = { PK: 'EX#a#r', SK: 'EXECUTION', GSI2PK: 'RUN#ACTIVE#webhook#1', GSI2SK: 'W#r', status: 'PENDING' };
    const parts = writeParts(before, after, true);
    expect(parts.map((p) => [p.index, p.units])).toEqual([
      ['table', 2],
      ['GSI2', 1],
    ]);
    expect(writeParts(before, after, false).map((p) => p.units)).toEqual([1, 1]);
  });
});

describe("the stage's fixed monthly cost, read from its template", () => {
  const fn = { Type: 'AWS::Lambda::Function', Properties: {} };
  const template = {
    Dash: { Type: 'AWS::CloudWatch::Dashboard', Properties: {} },
    Plain: { Type: 'AWS::CloudWatch::Alarm', Properties: { MetricName: 'Errors', Period: 60 } },
    Math: {
      Type: 'AWS::CloudWatch::Alarm',
      Properties: {
        Metrics: [
          { Id: 'a', MetricStat: { Period: 300 } },
          { Id: 'b', MetricStat: { Period: 300 } },
          { Id: 'e', Expression: 'a/b' },
        ],
      },
    },
    Fast: { Type: 'AWS::CloudWatch::Alarm', Properties: { MetricName: 'x', Period: 10 } },
    S1: { Type: 'AWS::SecretsManager::Secret', Properties: {} },
    K1: { Type: 'AWS::KMS::Key', Properties: {} },
    Sweep: fn,
    Rule: {
      Type: 'AWS::Events::Rule',
      Properties: { Description: 'sweep', ScheduleExpression: 'rate(1 minute)', Targets: [{ Arn: { 'Fn::GetAtt': ['Sweep', 'Arn'] } }] },
    },
    Q: { Type: 'AWS::SQS::Queue', Properties: {} },
    Esm: { Type: 'AWS::Lambda::EventSourceMapping', Properties: { EventSourceArn: { 'Fn::GetAtt': ['Q', 'Arn'] } } },
    Stream: { Type: 'AWS::Lambda::EventSourceMapping', Properties: { EventSourceArn: { Ref: 'TableStreamArn' } } },
  };

  it('counts what bills monthly from the resources: alarms by the metrics they read, SQS mappings only', () => {
    const f: Fixed = fixedOfTemplate(template, (target) => (target === 'Sweep' ? 0.00002 : Number.NaN));
    expect(f).toMatchObject({ dashboards: 1, alarmMetrics: 3, highResolutionAlarmMetrics: 1, secrets: 1, kmsKeys: 1 });
    expect(f.schedules).toEqual([{ name: 'sweep: rate(1 minute)', perMonth: 43_800, dollarsEach: 0.00002 }]);
    expect(f.idlePolls).toBe(IDLE_POLLERS * 3 * 43_800);
    expect(f.customMetrics).toBeGreaterThan(TRIGGER_REJECT_CODES);
  });

  it('prices it line by line, and spreads it over a month of runs', () => {
    const { lines, total } = fixedMonthly({
      dashboards: 1,
      alarmMetrics: 10,
      highResolutionAlarmMetrics: 0,
      compositeAlarms: 0,
      customMetrics: 10,
      secrets: 2,
      kmsKeys: 1,
      schedules: [{ name: 'sweep', perMonth: 43_800, dollarsEach: 0.00002 }],
      idlePolls: 0,
    });
    expect(total).toBeCloseTo(3 + 1 + 3 + 0.8 + 1 + 0.876, 6);
    expect(lines.reduce((n, l) => n + l.monthly, 0)).toBeCloseTo(total, 9);
    expect(fixedPerMillion(20, 10e6)).toBeCloseTo(2, 9);
    expect(fixedPerMillion(20, 100e6)).toBeCloseTo(0.2, 9);
  });

  it('reads schedules as rate() expressions and refuses the rest', () => {
    expect(invocationsPerMonth('rate(5 minutes)')).toBe(8_760);
    expect(invocationsPerMonth('rate(1 hour)')).toBe(730);
    expect(() => invocationsPerMonth('cron(0 * * * ? *)')).toThrow(/rate/);
  });

  it("renders the access log's format with a request's values, refusing a variable it has no value for", () => {
    const stage = {
      Type: 'AWS::ApiGatewayV2::Stage',
      Properties: { AccessLogSettings: { Format: '{"s":"$context.status","p":"$context.path"}' } },
    };
    expect(accessLogLine({ stage }, { status: '200', path: '/x' })).toBe('{"s":"200","p":"/x"}');
    expect(() => accessLogLine({ stage }, { status: '200' })).toThrow(/context.path/);
  });
});
