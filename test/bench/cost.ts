// `npm run bench -- cost`: the AWS bill per million runs of the run-costs scenarios (docs/performance.md
// "The price of a million runs"), from what the bench counts (SDK calls, DynamoDB units by AWS's sizing
// rules, log bytes) and measures (handler durations, in-process on the emulators, warm), at list prices
// (`./prices.ts`), beside the same workflow on Step Functions.
import { createServer } from 'node:http';
import { performance } from 'node:perf_hooks';
import { PLAN_RATE_LIMITS, resetConfig } from '../../shared/config.ts';
import { countersFor } from '../../shared/db/entities/rate-counters.ts';
import { getExecution } from '../../shared/db/entities/execution.ts';
import { createKey } from '../../shared/domain/keys.ts';
import { logger } from '../../shared/logger.ts';
import { resetMetrics } from '../../shared/metrics.ts';
import { WorkflowDefinition } from '../../shared/engine/definition.ts';
import { takeRunMessages } from '../support/engine.ts';
import { type Bill, billPerMillion, gbSeconds, stepFunctionsPerMillion, type Usage } from './cost-model.ts';
import { type Call, recordCalls, uncounted } from './counting.ts';
import { runBatch } from './drive.ts';
import { family } from './heat-model.ts';
import { recordHeat, unrecorded } from './heat-record.ts';
import { warm } from './heat-work.ts';
import { setFlow } from './flows.ts';
import { givenAccount } from '../support/fixtures.ts';
import { BENCH_RATE_LIMITS, type BenchData, hookOn, triggerRequest } from './scenarios.ts';

/** The functions' memory (infra/constructs/route-function.ts: 256 MB unless a route says otherwise; the trigger and the runs worker do not). */
const MEMORY_MB = 256;
/** Lambda's own START, END and REPORT lines per invocation (text format), about this many bytes together. */
const PLATFORM_LOG_BYTES = 300;
const PLATFORM_LOG_EVENTS = 3;
/** Runs per scenario: one worker batch of 10, as on a busy webhook (the runs worker's batch size on AWS). */
const RUNS = 10;

type Invocations = { trigger: number[]; worker: number[] };

/** The bench's own work inside a measurement (polling the queue, reading the runs' progress): neither counted nor priced. */
const benchOnly = <T>(fn: () => Promise<T>): Promise<T> => unrecorded(() => uncounted(fn));

/**
 * Triggers `RUNS` runs of `hook`, then the runs worker on their messages in batches, to the end; each
 * handler call timed. Warm it first (`warm`): outside the pass that is counted, whose figures are then
 * the runs' own, as are its SDK calls (the queue's polls and the progress reads are the bench's).
 */
async function drive(hook: Awaited<ReturnType<typeof hookOn>>): Promise<Invocations> {
  const out: Invocations = { trigger: [], worker: [] };
  const ids: string[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t = performance.now();
    const res = await triggerRequest(hook.webhook.webhookId, hook.key.token);
    out.trigger.push(performance.now() - t);
    if (res.status !== 200) throw new Error(`trigger answered ${res.status}`);
    ids.push(res.json.executionId as string);
  }
  const wanted = new Set(ids);
  for (let round = 0; round < 50; round++) {
    const batch = (await benchOnly(() => takeRunMessages())).filter((m) => wanted.has(m.executionId));
    if (batch.length === 0) {
      const ended = await benchOnly(() => Promise.all(ids.map((id) => getExecution(hook.webhook.accountId, id))));
      if (ended.every((e) => e?.status === 'SUCCEEDED')) return out;
      continue;
    }
    const t = performance.now();
    await runBatch(batch, `c-${round}`);
    out.worker.push(performance.now() - t);
  }
  throw new Error('runs did not finish');
}

/** `drive` on a warm instance (`warm`: the records read afresh into their caches, the rate counters in their window). */
async function warmDrive(hook: Awaited<ReturnType<typeof hookOn>>): Promise<Invocations> {
  await warm([hook]);
  return drive(hook);
}

/** Bytes and events written to stdout while `fn` runs, with the logger at INFO and metrics on (as deployed). */
async function logged<T>(
  fn: () => Promise<T>,
): Promise<{ result: T; bytes: number; events: number; metricBytes: number; metricEvents: number }> {
  const write = process.stdout.write.bind(process.stdout);
  const level = logger.getLevelName();
  const metricsOff = process.env.POWERTOOLS_METRICS_DISABLED;
  let bytes = 0;
  let events = 0;
  let metricBytes = 0;
  let metricEvents = 0;
  process.stdout.write = ((chunk: unknown) => {
    for (const line of String(chunk).split('\n').filter(Boolean)) {
      bytes += Buffer.byteLength(line);
      events++;
      // An EMF metric line (CloudWatch makes metrics of it): billed as log ingestion like the rest.
      if (line.includes('"_aws"')) {
        metricBytes += Buffer.byteLength(line);
        metricEvents++;
      }
    }
    return true;
  }) as typeof process.stdout.write;
  logger.setLogLevel('INFO');
  process.env.POWERTOOLS_METRICS_DISABLED = 'false';
  resetMetrics();
  try {
    const result = await fn();
    return { result, bytes, events, metricBytes, metricEvents };
  } finally {
    process.stdout.write = write;
    logger.setLogLevel(level);
    process.env.POWERTOOLS_METRICS_DISABLED = metricsOff;
    resetMetrics();
  }
}

const count = (calls: readonly Call[], service: Call['service'], command?: RegExp) =>
  calls.filter((c) => c.service === service && (!command || command.test(c.command))).length;
const median = (xs: readonly number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

export type CostRow = {
  scenario: string;
  usage: Usage;
  bill: Bill;
  stepFunctions: { standard: number; express: number };
  /** Of the log bytes and events per run, the EMF metric lines'. */
  metricLogs: { bytes: number; events: number };
  /** Write units per run by item family (table or index, key family: `./heat-model.ts`), largest first. */
  writes: { where: string; units: number }[];
};

function writesBy(accesses: Awaited<ReturnType<typeof recordHeat>>['accesses']) {
  const by = new Map<string, number>();
  for (const a of accesses.filter((x) => x.op === 'write')) {
    const where = `${a.command}: ${a.index} ${family(a.pk)}${a.sk ? ` / ${family(a.sk)}` : ''}`;
    by.set(where, (by.get(where) ?? 0) + a.units / RUNS);
  }
  return [...by].map(([where, units]) => ({ where, units: Number(units.toFixed(2)) })).sort((a, b) => b.units - a.units);
}

/**
 * One scenario: a recorded pass (calls, units, log bytes: the recorders' own reads make its times
 * longer) and a timed pass (durations only), `RUNS` runs each.
 */
async function scenario(name: string, hook: Awaited<ReturnType<typeof hookOn>>, states: number): Promise<CostRow> {
  await warm([hook]);
  const recorded = await logged(() => recordCalls(() => recordHeat(() => drive(hook))));
  const { calls } = recorded.result;
  const { accesses, result: invocations } = recorded.result.result;
  const timed = await warmDrive(hook);
  await warmDrive(hook);
  const again = await warmDrive(hook);
  const triggerMs = median([...timed.trigger, ...again.trigger]);
  const batches = invocations.worker.length;
  const workerMs = median([...timed.worker, ...again.worker]);
  const invocationCount = RUNS + batches;
  const usage: Usage = {
    lambdaInvocations: invocationCount / RUNS,
    lambdaGbSeconds: (RUNS * gbSeconds(triggerMs, MEMORY_MB) + batches * gbSeconds(workerMs, MEMORY_MB)) / RUNS,
    httpApiRequests: 1,
    // Our sends, and per worker batch the event source mapping's receive and batch delete.
    sqsRequests: (count(calls, 'sqs') + 2 * batches) / RUNS,
    writeUnits: accesses.filter((a) => a.op === 'write').reduce((n, a) => n + a.units, 0) / RUNS,
    readUnits: accesses.filter((a) => a.op === 'read').reduce((n, a) => n + a.units, 0) / RUNS,
    s3Puts: count(calls, 's3', /Put/) / RUNS,
    s3Gets: count(calls, 's3', /Get/) / RUNS,
    logBytes: (recorded.bytes + invocationCount * PLATFORM_LOG_BYTES) / RUNS,
    logEvents: (recorded.events + invocationCount * PLATFORM_LOG_EVENTS) / RUNS,
    kmsRequests: 0,
    secretsManagerCalls: 0,
  };
  return {
    scenario: name,
    usage,
    bill: billPerMillion(usage),
    stepFunctions: stepFunctionsPerMillion(states),
    metricLogs: { bytes: recorded.metricBytes / RUNS, events: recorded.metricEvents / RUNS },
    writes: writesBy(accesses),
  };
}

/** The realistic workload's shape (issue 32 item 4): set → http_request (a listener answering after 20 ms) → switch → set. */
export const realisticFlow = (base: string) =>
  WorkflowDefinition.parse({
    variables: { n: { type: 'number', default: 0 } },
    steps: [
      { id: 'prepare', type: 'set', values: { amount: '{% $vars.n + 1 %}' } },
      { id: 'call', type: 'http_request', url: `{% '${base}/slow/' & $execution.id %}`, timeoutMs: 2000 },
      {
        id: 'route',
        type: 'switch',
        cases: [{ when: '{% $steps.call.status = 200 %}', next: 'ok' }],
        default: 'ok',
      },
      { id: 'ok', type: 'set', values: { done: true } },
    ],
  });

/**
 * The per-minute limit of the account the cost is measured on, by default the team plan's (3,000: one
 * rate counter, the account item, as for any account under 30,000 a minute). The other bench parts'
 * accounts have 1,000,000 (`BENCH_RATE_LIMITS`: no measurement refused), spread over 34 counters that
 * each start their window in so short a measurement: `--cost-rate-limit 1000000` measures that.
 */
export const COST_RATE_LIMIT = PLAN_RATE_LIMITS.team;

/**
 * The bench data with a team account of its own whose limit is `perMinute` (its rate counters laid out
 * for it when it is made), its key in place of the bench's webhook key.
 */
async function costAccount(d: BenchData, perMinute: number): Promise<BenchData> {
  process.env.RATE_LIMITS = JSON.stringify({ ...BENCH_RATE_LIMITS, team: perMinute });
  resetConfig();
  const team = await givenAccount({ plan: 'team' });
  const key = await createKey(
    { accountId: team.account.accountId, userId: team.admin.userId },
    { name: 'trigger', scopes: ['WEBHOOK_TRIGGER'], validityDays: 30 },
  );
  return { ...d, team, teamHook: { ...d.teamHook, key } };
}

export async function measureCost(
  bench: BenchData,
  opts: { rateLimit?: number } = {},
): Promise<{ rows: CostRow[]; rateLimit: number; counters: number }> {
  const rateLimit = opts.rateLimit ?? COST_RATE_LIMIT;
  const listener = createServer((_req, res) => {
    setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'), 20);
  });
  await new Promise<void>((r) => listener.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(listener.address() as { port: number }).port}`;
  const rateLimits = process.env.RATE_LIMITS;
  process.env.HTTP_STEP_ALLOWLIST = '127.0.0.1/32';
  try {
    const d = await costAccount(bench, rateLimit);
    const rows = [
      await scenario('webhook run, 1 set step', await hookOn(d, 1, setFlow(1), 'cost 1'), 1),
      await scenario('webhook run, 5 set steps', await hookOn(d, 5, setFlow(5), 'cost 5'), 5),
      await scenario(
        'webhook run, set → http_request (20 ms) → switch → set',
        await hookOn(d, 0, realisticFlow(base), 'cost realistic'),
        4,
      ),
    ];
    return { rows, rateLimit, counters: countersFor(rateLimit) };
  } finally {
    listener.close();
    process.env.RATE_LIMITS = rateLimits;
    resetConfig();
  }
}
