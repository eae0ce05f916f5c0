import { PRICES } from './prices.ts';
import { COLD_START_RATE, type CostResult, IN_TRIGGER, MINUTES_A_MONTH, measureCost } from './cost.ts';
import { fixedPerMillion } from './cost-model.ts';
import type { BenchData } from './scenarios.ts';

const dollars = (n: number) => Number(n.toFixed(2));
const batch = (perBatch: number) => (perBatch === IN_TRIGGER ? 'in its trigger' : perBatch);
/** The write units per run that landed on a webhook's inbound log (its head or its slots): an accepted run writes none. */
export const inboundLogUnits = (writes: readonly { where: string; units: number }[]) =>
  writes.filter((w) => / WHREQ#| WH#[^ ]* \/ INBOUND/.test(w.where)).reduce((n, w) => n + w.units, 0);
/** Runs a month the stage's fixed cost is spread over, in the report. */
export const VOLUMES = [1e6, 10e6, 100e6] as const;

/**
 * The cost part of `npm run bench`: the bill per million runs per scenario at full worker batches and
 * at one run a batch (every run queued), and for runs of `set` steps finished in their trigger; its lines, Step Functions beside it, and the stage's fixed monthly cost, on an
 * account whose limit is `rateLimit` a minute (by default the team plan's: `measureCost`).
 */
export async function costPart(d: BenchData, opts: { rateLimit?: number } = {}): Promise<CostResult> {
  const result = await measureCost(d, opts);
  const { rows, rateLimit, counters, stage, sweep, fixed } = result;
  console.log(
    `\nAWS bill per million runs, ${PRICES.region}, ${PRICES.asOf} (docs/performance.md "The price of a million runs"), USD; ` +
      `an account limited to ${rateLimit.toLocaleString('en-US')} requests a minute (${counters} rate counter${counters > 1 ? 's' : ''}); ` +
      `variable cost only (the stage's fixed cost below)`,
  );
  console.table(
    rows.map((r) => ({
      scenario: r.scenario,
      'runs a batch': batch(r.perBatch),
      lambda: dollars(r.bill.lambda),
      INIT: dollars(r.bill.init),
      'API Gateway': dollars(r.bill.apiGateway),
      SQS: dollars(r.bill.sqs),
      'DynamoDB requests': dollars(r.bill.dynamodb),
      'storage + PITR': dollars(r.bill.storage),
      S3: dollars(r.bill.s3),
      logs: dollars(r.bill.logs),
      'access log': dollars(r.bill.accessLog),
      total: dollars(r.bill.total),
      'Step Functions Standard': dollars(r.stepFunctions.standard),
      'Step Functions Express': dollars(r.stepFunctions.express),
    })),
  );
  console.log('\nWhat one run uses (per run)');
  console.table(
    rows.map((r) => ({
      scenario: r.scenario,
      'runs a batch': batch(r.perBatch),
      invocations: Number(r.usage.lambdaInvocations.toFixed(2)),
      'GB-s': Number(r.usage.lambdaGbSeconds.toFixed(5)),
      'SQS requests': Number(r.usage.sqsRequests.toFixed(2)),
      WRU: Number(r.usage.writeUnits.toFixed(1)),
      RRU: Number(r.usage.readUnits.toFixed(1)),
      // What the webhook's inbound log (issue 47) adds to an accepted run: its head (`WH#<webhook>` / `INBOUND`) and slots (`WHREQ#…`); 0 by design.
      'inbound log WRU': inboundLogUnits(r.writes),
      'stored bytes (table + indexes)': `${Math.round(r.stored.tableBytes)} + ${Math.round(r.stored.indexBytes)}`,
      'kept days': r.stored.days,
      'run items without TTL': r.stored.withoutTtl,
      'log bytes': Math.round(r.usage.logBytes),
      'log events': Number(r.usage.logEvents.toFixed(1)),
      'of which metric (EMF) bytes': Math.round(r.metricLogs.bytes),
      'Step Functions transitions': r.transitions,
    })),
  );
  console.log(
    `\nINIT, measured (fresh Node process to the bundle imported, median of 10): trigger ${stage.init.triggerMs.toFixed(0)} ms, ` +
      `runs worker ${stage.init.workerMs.toFixed(0)} ms; billed at a stated cold-start rate of ${COLD_START_RATE * 100} % of invocations. ` +
      `Access log: ${stage.accessLog.bytes} bytes a request; logs kept ${stage.logRetentionDays} days.`,
  );
  console.log(
    `\nThe stage's fixed cost a month, from its synthesized template, USD (the scheduled sweep measured idle: ` +
      `${sweep.ms.toFixed(0)} ms, ${sweep.calls} calls, ${sweep.readUnits} read units an invocation, ${Math.round(MINUTES_A_MONTH)} a month)`,
  );
  console.table(fixed.lines.map((l) => ({ what: l.what, quantity: Math.round(l.quantity), monthly: dollars(l.monthly) })));
  console.log(
    `total ${dollars(fixed.total)} a month: ${VOLUMES.map((v) => `$${dollars(fixedPerMillion(fixed.total, v))}/M at ${v / 1e6} M runs a month`).join(', ')}`,
  );
  for (const r of rows.filter((x) => x.perBatch === 1 || x.perBatch === IN_TRIGGER)) {
    console.log(`\nWrite units per run by item, ${r.scenario}, ${r.perBatch === 1 ? 'one run a batch' : 'finished in its trigger'}`);
    console.table(r.writes);
  }
  return result;
}
