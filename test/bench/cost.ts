// `npm run bench -- cost`: the AWS bill per million runs of the run-costs scenarios (docs/performance.md
// "The price of a million runs"), from what the bench counts (SDK calls, DynamoDB units by AWS's sizing
// rules, the bytes the runs leave stored until their TTL, log bytes) and measures (handler durations,
// in-process on the emulators, warm; the hot functions' INIT in fresh processes), at list prices
// (`./prices.ts`), beside the same workflow on Step Functions; and what a stage costs a month whatever
// it runs, read from its synthesized template (`./cost-fixed.ts`).
import { createServer } from 'node:http';
import { performance } from 'node:perf_hooks';
import { PLAN_RATE_LIMITS, resetConfig } from '../../shared/config.ts';
import { countersFor } from '../../shared/db/entities/rate-counters.ts';
import { getExecution } from '../../shared/db/entities/execution.ts';
import { listEvents } from '../../shared/db/entities/run-events.ts';
import { createKey } from '../../shared/domain/keys.ts';
import { logger } from '../../shared/logger.ts';
import { resetMetrics } from '../../shared/metrics.ts';
import { takeRunMessages } from '../support/engine.ts';
import { handler as scheduledSweep } from '../../functions/sweep/scheduled.ts';
import { bundle } from './bundles.ts';
import { initTimes } from './cold-start.ts';
import { accessLogLine, fixedOfTemplate, logRetentionDays, synthesized } from './cost-fixed.ts';
import {
  type Bill,
  billPerMillion,
  type FixedLine,
  fixedMonthly,
  gbMonths,
  gbSeconds,
  MONTH_MS,
  NO_USAGE,
  stepFunctionsPerMillion,
  type Usage,
} from './cost-model.ts';
import { PRICES } from './prices.ts';
import { readItems, storedBytes } from './write-units.ts';
import { type Call, recordCalls, uncounted } from './counting.ts';
import { runBatch } from './drive.ts';
import { family } from './heat-model.ts';
import { recordHeat, unrecorded } from './heat-record.ts';
import { warm } from './heat-work.ts';
import { realisticFlow, setFlow } from './flows.ts';
import { givenAccount } from '../support/fixtures.ts';
import { BENCH_RATE_LIMITS, type BenchData, hookOn, triggerRequest, withInline } from './scenarios.ts';

/** The functions' memory (infra/constructs/route-function.ts: 256 MB unless a route says otherwise; the trigger and the runs worker do not). */
const MEMORY_MB = 256;
/** Lambda's own START, END and REPORT lines per invocation (text format), about this many bytes together. */
const PLATFORM_LOG_BYTES = 300;
const PLATFORM_LOG_EVENTS = 3;
/** Runs per scenario pass: one worker batch of 10, as on a busy webhook (the runs worker's batch size on AWS). */
const RUNS = 10;
/**
 * The share of invocations that start a new instance (and pay its INIT), stated rather than measured:
 * AWS gives under 1 % for steady production traffic; a bursty or very quiet stage has more.
 */
export const COLD_START_RATE = 0.01;
/**
 * Worker batch sizes priced: full batches of 10 (a busy webhook), and one run a batch, the usual case
 * under a few runs a second (the event source mapping invokes as soon as a message is there: no
 * batching window by default).
 */
export const BATCHES = [10, 1] as const;

/** `perBatch` of a row whose runs finish in their trigger (docs/runs-and-events.md): no queue, no worker batch. */
export const IN_TRIGGER = 0;

type Invocations = { trigger: number[]; worker: number[]; ids: string[] };

/** The bench's own work inside a measurement (polling the queue, reading the runs' progress): neither counted nor priced. */
const benchOnly = <T>(fn: () => Promise<T>): Promise<T> => unrecorded(() => uncounted(fn));

/**
 * Triggers `RUNS` runs of `hook`, then the runs worker on their messages in batches, to the end; each
 * handler call timed. Warm it first (`warm`): outside the pass that is counted, whose figures are then
 * the runs' own, as are its SDK calls (the queue's polls and the progress reads are the bench's).
 */
async function drive(hook: Awaited<ReturnType<typeof hookOn>>, perBatch: number): Promise<Invocations> {
  const out: Invocations = { trigger: [], worker: [], ids: [] };
  const ids = out.ids;
  for (let i = 0; i < RUNS; i++) {
    const t = performance.now();
    const res = await triggerRequest(hook.webhook.webhookId, hook.key.token);
    out.trigger.push(performance.now() - t);
    if (res.status !== 200) throw new Error(`trigger answered ${res.status}`);
    ids.push(res.json.executionId as string);
  }
  const wanted = new Set(ids);
  for (let round = 0; round < 50; round++) {
    // Both lanes, as the worker's two event sources do: past 250 requests in its minute the bench's account is heavy (shared/engine/lanes.ts).
    const taken = (await benchOnly(async () => [...(await takeRunMessages()), ...(await takeRunMessages(10, 'heavy'))])).filter((m) =>
      wanted.has(m.executionId),
    );
    if (taken.length === 0) {
      const ended = await benchOnly(() => Promise.all(ids.map((id) => getExecution(hook.webhook.accountId, id))));
      if (ended.every((e) => e?.status === 'SUCCEEDED')) return out;
      continue;
    }
    for (let i = 0; i < taken.length; i += perBatch) {
      const t = performance.now();
      await runBatch(taken.slice(i, i + perBatch), `c-${round}-${i}`);
      out.worker.push(performance.now() - t);
    }
  }
  const ended = await benchOnly(() => Promise.all(ids.map((id) => getExecution(hook.webhook.accountId, id))));
  throw new Error(`runs did not finish: ${[...new Set(ended.map((e) => e?.status))].join(', ')}`);
}

/** `drive` on a warm instance (`warm`: the records read afresh into their caches, the rate counters in their window). */
async function warmDrive(hook: Awaited<ReturnType<typeof hookOn>>, perBatch: number): Promise<Invocations> {
  await warm([hook]);
  return drive(hook, perBatch);
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
  /** Runs per worker batch. */
  perBatch: number;
  usage: Usage;
  /** Step Functions Standard's transitions of the same run: its executed steps. */
  transitions: number;
  bill: Bill;
  stepFunctions: { standard: number; express: number };
  /** Of the log bytes and events per run, the EMF metric lines'. */
  metricLogs: { bytes: number; events: number };
  /** Write units per run by item family (table or index, key family: `./heat-model.ts`), largest first. */
  writes: { where: string; units: number }[];
  /** What a run leaves stored: bytes (table items, index entries) and the days they are kept, per run. */
  stored: { tableBytes: number; indexBytes: number; days: number; withoutTtl: number };
};

/** What the scenarios share: the template's figures, the hot functions' INIT. */
export type Stage = {
  accessLog: { bytes: number; events: number };
  logRetentionDays: number;
  init: { triggerMs: number; workerMs: number };
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
 * What the run items left in the table cost to keep: every item the pass wrote that has a TTL (the
 * runs' own: shared items such as the account or the webhook's stats have none and do not grow with
 * the runs), its bytes and its index entries' (`storedBytes`) until its TTL, read back after the pass.
 */
async function storedByRuns(accesses: Awaited<ReturnType<typeof recordHeat>>['accesses'], now: number) {
  const keys = new Map<string, { PK: string; SK: string }>();
  for (const a of accesses) if (a.op === 'write' && a.index === 'table' && a.sk) keys.set(`${a.pk}\u0000${a.sk}`, { PK: a.pk, SK: a.sk });
  const items = await readItems([...keys.values()]);
  let table = 0;
  let index = 0;
  let tableBytes = 0;
  let indexBytes = 0;
  let days = 0;
  let withoutTtl = 0;
  for (const item of items) {
    if (!item) continue;
    if (typeof item.ttl !== 'number') {
      if (String(item.PK).includes('#EX#') || String(item.PK).startsWith('EX#')) withoutTtl++;
      continue;
    }
    const kept = item.ttl * 1000 - now;
    const bytes = storedBytes(item);
    table += gbMonths(bytes.table, kept);
    index += gbMonths(bytes.indexes, kept);
    tableBytes += bytes.table;
    indexBytes += bytes.indexes;
    days = Math.max(days, kept / 86_400_000);
  }
  return {
    tableGbMonths: table / RUNS,
    indexGbMonths: index / RUNS,
    stored: { tableBytes: tableBytes / RUNS, indexBytes: indexBytes / RUNS, days: Math.round(days), withoutTtl },
  };
}

/** Step Functions Standard's transitions for a run like `executionId`: a state each step execution (each attempt). */
async function executedSteps(accountId: string, executionId: string): Promise<number> {
  const { items } = await listEvents(accountId, executionId, 1000);
  return items.filter((e) => e.type === 'step.started' || e.type === 'step.retrying').length;
}

/**
 * One scenario at `perBatch` runs a worker batch: a recorded pass (calls, units, log bytes: the
 * recorders' own reads make its times longer) and timed passes (durations only), `RUNS` runs each.
 */
async function scenario(name: string, hook: Awaited<ReturnType<typeof hookOn>>, perBatch: number, stage: Stage): Promise<CostRow> {
  await warm([hook]);
  const recorded = await logged(() => recordCalls(() => recordHeat(() => drive(hook, perBatch))));
  const { calls } = recorded.result;
  const { accesses, result: invocations } = recorded.result.result;
  const kept = await benchOnly(() => storedByRuns(accesses, Date.now()));
  const transitions = await benchOnly(() => executedSteps(hook.webhook.accountId, invocations.ids[0] as string));
  const timed = await warmDrive(hook, perBatch);
  await warmDrive(hook, perBatch);
  const again = await warmDrive(hook, perBatch);
  const triggerMs = median([...timed.trigger, ...again.trigger]);
  const batches = invocations.worker.length;
  const workerMs = median([...timed.worker, ...again.worker]);
  const invocationCount = RUNS + batches;
  const logBytes = (recorded.bytes + invocationCount * PLATFORM_LOG_BYTES) / RUNS;
  const logEvents = (recorded.events + invocationCount * PLATFORM_LOG_EVENTS) / RUNS;
  const accessLogBytes = stage.accessLog.bytes;
  const usage: Usage = {
    lambdaInvocations: invocationCount / RUNS,
    lambdaGbSeconds: (RUNS * gbSeconds(triggerMs, MEMORY_MB) + batches * gbSeconds(workerMs, MEMORY_MB)) / RUNS,
    initGbSeconds:
      (COLD_START_RATE * (RUNS * gbSeconds(stage.init.triggerMs, MEMORY_MB) + batches * gbSeconds(stage.init.workerMs, MEMORY_MB))) / RUNS,
    httpApiRequests: 1,
    // Our sends, and per worker batch the event source mapping's receive and batch delete.
    sqsRequests: (count(calls, 'sqs') + 2 * batches) / RUNS,
    writeUnits: accesses.filter((a) => a.op === 'write').reduce((n, a) => n + a.units, 0) / RUNS,
    readUnits: accesses.filter((a) => a.op === 'read').reduce((n, a) => n + a.units, 0) / RUNS,
    tableGbMonths: kept.tableGbMonths,
    indexGbMonths: kept.indexGbMonths,
    s3Puts: count(calls, 's3', /Put/) / RUNS,
    s3Gets: count(calls, 's3', /Get/) / RUNS,
    logBytes,
    logEvents,
    accessLogBytes,
    accessLogEvents: stage.accessLog.events,
    logGbMonths: gbMonths(logBytes + accessLogBytes, stage.logRetentionDays * 86_400_000),
    kmsRequests: 0,
    secretsManagerCalls: 0,
  };
  return {
    scenario: name,
    perBatch,
    usage,
    transitions,
    bill: billPerMillion(usage),
    stepFunctions: stepFunctionsPerMillion(transitions),
    metricLogs: { bytes: recorded.metricBytes / RUNS, events: recorded.metricEvents / RUNS },
    writes: writesBy(accesses),
    stored: kept.stored,
  };
}

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

/** The stage's figures the scenarios share: the access log's line and the logs' retention (template), the hot functions' INIT (measured). */
async function measureStage(byId: ReturnType<typeof synthesized>, webhookId: string, responseBytes: number): Promise<Stage> {
  const line = accessLogLine(byId, {
    requestId: 'Qv0rCgAvoAMEMVw=',
    'identity.sourceIp': '203.0.113.45',
    requestTime: '27/Nov/2026:10:00:00 +0000',
    routeKey: 'POST /api/webhooks/{webhookId}/trigger',
    path: `/api/webhooks/${webhookId}/trigger`,
    status: '200',
    protocol: 'HTTP/1.1',
    responseLength: String(responseBytes),
    responseLatency: '31',
    integrationLatency: '29',
    integrationStatus: '200',
    integrationErrorMessage: '-',
    'error.message': '-',
  });
  const [trigger, worker] = [await bundle('http/webhooks/trigger'), await bundle('worker/execute')];
  return {
    accessLog: { bytes: Buffer.byteLength(line), events: 1 },
    logRetentionDays: logRetentionDays(byId),
    init: { triggerMs: initTimes(trigger.file), workerMs: initTimes(worker.file) },
  };
}

export type SweepCost = { ms: number; calls: number; readUnits: number; writeUnits: number; logBytes: number; dollars: number };

/**
 * One invocation of the scheduled sweep on a stage with nothing to sweep (the bench's data: no
 * approval due, no crashed run): its reads of every shard it pages, its duration at its memory, its
 * platform log lines. Median duration of five.
 */
async function measureSweep(memoryMb: number): Promise<SweepCost> {
  const recorded = await logged(() => recordCalls(() => recordHeat(() => scheduledSweep())));
  const { calls } = recorded.result;
  const { accesses } = recorded.result.result;
  const times: number[] = [];
  for (let i = 0; i < 5; i++) {
    const t = performance.now();
    await scheduledSweep();
    times.push(performance.now() - t);
  }
  const ms = median(times);
  const readUnits = accesses.filter((a) => a.op === 'read').reduce((n, a) => n + a.units, 0);
  const writeUnits = accesses.filter((a) => a.op === 'write').reduce((n, a) => n + a.units, 0);
  const logBytes = recorded.bytes + PLATFORM_LOG_BYTES;
  const usage: Usage = {
    ...NO_USAGE,
    lambdaInvocations: 1,
    lambdaGbSeconds: gbSeconds(ms, memoryMb),
    readUnits,
    writeUnits,
    sqsRequests: count(calls, 'sqs'),
    logBytes,
    logEvents: recorded.events + PLATFORM_LOG_EVENTS,
  };
  return { ms, calls: calls.length, readUnits, writeUnits, logBytes, dollars: billPerMillion(usage).total / 1e6 };
}

export type CostResult = {
  rows: CostRow[];
  rateLimit: number;
  counters: number;
  stage: Stage;
  sweep: SweepCost;
  fixed: { lines: FixedLine[]; total: number };
};

export async function measureCost(bench: BenchData, opts: { rateLimit?: number } = {}): Promise<CostResult> {
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
    const byId = synthesized();
    const sweepId = Object.keys(byId).find((id) => /^SweepScheduled[0-9A-F]{8}$/.test(id));
    if (!sweepId) throw new Error('no scheduled sweep function in the template');
    const sweep = await measureSweep(Number(byId[sweepId]?.Properties.MemorySize ?? MEMORY_MB));
    const fixed = fixedMonthly(
      fixedOfTemplate(byId, (target) => {
        if (target !== sweepId) throw new Error(`a scheduled rule invokes ${target}: the cost bench measures the scheduled sweep only`);
        return sweep.dollars;
      }),
    );
    const hooks = [
      ['webhook run, 1 set step', await hookOn(d, 1, setFlow(1), 'cost 1'), false],
      ['webhook run, 5 set steps', await hookOn(d, 5, setFlow(5), 'cost 5'), false],
      ['webhook run, set → http_request (20 ms) → switch → set', await hookOn(d, 0, realisticFlow(base), 'cost realistic'), true],
    ] as const;
    // The trigger's answer (its length is in the access log line): one run, outside the measurement.
    const [, first] = hooks[0];
    await warm([first]);
    const probe = await benchOnly(async () => {
      const res = await triggerRequest(first.webhook.webhookId, first.key.token);
      await runBatch(await takeRunMessages(), 'probe');
      return res;
    });
    const stage = await measureStage(byId, first.webhook.webhookId, Buffer.byteLength(JSON.stringify(probe.json)));
    const rows: CostRow[] = [];
    // The queued path: every run through the runs queue and the worker. The `set` workflows with
    // INLINE_RUNS=off (as deployed they finish in their trigger: below), the realistic one as deployed
    // (its first `set` in its trigger, which hands the run to the worker at the http_request).
    for (const perBatch of BATCHES)
      for (const [name, hook, asDeployed] of hooks) rows.push(await withInline(asDeployed, () => scenario(name, hook, perBatch, stage)));
    // Runs of `set` steps as deployed: they finish in their trigger.
    for (const [name, hook] of hooks.slice(0, 2)) rows.push(await scenario(name, hook, IN_TRIGGER, stage));
    return { rows, rateLimit, counters: countersFor(rateLimit), stage, sweep, fixed };
  } finally {
    listener.close();
    process.env.RATE_LIMITS = rateLimits;
    resetConfig();
  }
}

/** The months' invocations of the minute's rule, for the report. */
export const MINUTES_A_MONTH = MONTH_MS / 60_000;
export { PRICES };
