import { describe, expect, it } from 'vitest';
import { billPerMillion, gbSeconds, LOG_EVENT_OVERHEAD_BYTES, stepFunctionsPerMillion, type Usage } from './cost-model.ts';
import { PRICES } from './prices.ts';

// The cost model's arithmetic (`npm run bench -- cost`): quantities per run × list prices, per million runs.

const none: Usage = {
  lambdaInvocations: 0,
  lambdaGbSeconds: 0,
  httpApiRequests: 0,
  sqsRequests: 0,
  writeUnits: 0,
  readUnits: 0,
  s3Puts: 0,
  s3Gets: 0,
  logBytes: 0,
  logEvents: 0,
  kmsRequests: 0,
  secretsManagerCalls: 0,
};

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
    expect(billPerMillion({ ...none, logBytes: perRun, logEvents: 1 }).logs).toBeCloseTo(PRICES.logsIngestGb, 6);
    expect(billPerMillion({ ...none, logBytes: 0, logEvents: 1 }).logs).toBeGreaterThan(0);
  });

  it('counts Lambda duration rounded up to the millisecond at the memory size', () => {
    expect(gbSeconds(10.2, 1024)).toBeCloseTo(0.011, 9);
    expect(gbSeconds(10, 256)).toBeCloseTo(0.0025, 9);
  });

  it('prices Step Functions beside it: Standard by transitions (states + 1), Express by request and 100 ms at 64 MB', () => {
    const one = stepFunctionsPerMillion(1);
    expect(one.standard).toBeCloseTo(2 * 25 + 1, 6);
    expect(one.express).toBeCloseTo(1 + 0.1 * (64 / 1024) * 16.67 + 1, 3);
    expect(stepFunctionsPerMillion(5).standard).toBeCloseTo(6 * 25 + 1, 6);
    expect(stepFunctionsPerMillion(1, 250).express).toBeGreaterThan(one.express);
  });
});
