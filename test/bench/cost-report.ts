import { PRICES } from './prices.ts';
import { type CostRow, measureCost } from './cost.ts';
import type { BenchData } from './scenarios.ts';

const dollars = (n: number) => Number(n.toFixed(2));

/**
 * The cost part of `npm run bench`: the bill per million runs per scenario, its lines, and Step Functions
 * beside it, on an account whose limit is `rateLimit` a minute (by default the team plan's: `measureCost`).
 */
export async function costPart(
  d: BenchData,
  opts: { rateLimit?: number } = {},
): Promise<{ rateLimit: number; counters: number; rows: CostRow[] }> {
  const { rows, rateLimit, counters } = await measureCost(d, opts);
  console.log(
    `\nAWS bill per million runs, ${PRICES.region}, ${PRICES.asOf} (docs/performance.md "The price of a million runs"), USD; ` +
      `an account limited to ${rateLimit.toLocaleString('en-US')} requests a minute (${counters} rate counter${counters > 1 ? 's' : ''})`,
  );
  console.table(
    rows.map((r) => ({
      scenario: r.scenario,
      lambda: dollars(r.bill.lambda),
      'API Gateway': dollars(r.bill.apiGateway),
      SQS: dollars(r.bill.sqs),
      DynamoDB: dollars(r.bill.dynamodb),
      S3: dollars(r.bill.s3),
      logs: dollars(r.bill.logs),
      total: dollars(r.bill.total),
      'Step Functions Standard': dollars(r.stepFunctions.standard),
      'Step Functions Express': dollars(r.stepFunctions.express),
    })),
  );
  console.log('\nWhat one run uses (per run)');
  console.table(
    rows.map((r) => ({
      scenario: r.scenario,
      invocations: Number(r.usage.lambdaInvocations.toFixed(2)),
      'GB-s': Number(r.usage.lambdaGbSeconds.toFixed(5)),
      'SQS requests': Number(r.usage.sqsRequests.toFixed(2)),
      WRU: Number(r.usage.writeUnits.toFixed(1)),
      RRU: Number(r.usage.readUnits.toFixed(1)),
      'log bytes': Math.round(r.usage.logBytes),
      'log events': Number(r.usage.logEvents.toFixed(1)),
      'of which metric (EMF) bytes': Math.round(r.metricLogs.bytes),
      'metric events': Number(r.metricLogs.events.toFixed(1)),
    })),
  );
  for (const r of rows) {
    console.log(`\nWrite units per run by item, ${r.scenario}`);
    console.table(r.writes);
  }
  return { rateLimit, counters, rows };
}
