import { handler as decideHandler } from '../../functions/http/approvals/decide.ts';
import { handler as getExecutionHandler } from '../../functions/http/v1/executions/get.ts';
import { handler as startRunHandler } from '../../functions/http/v1/workflows/start-run.ts';
import { handler as triggerHandler } from '../../functions/http/webhooks/trigger.ts';
import type { MiddlewareStack } from '@smithy/types';
import { db, queue } from '../../shared/clients.ts';
import { resetConfig } from '../../shared/config.ts';
import { type Execution, getExecution, listExecutions } from '../../shared/db/entities/execution.ts';
import { caches, keyRead, readThrough, webhookRead } from '../../shared/domain/records.ts';
import { currentWorkflow, currentWorkflows, forgetWorkflow } from '../../shared/engine/versions.ts';
import { createKey } from '../../shared/domain/keys.ts';
import { createWebhook } from '../../shared/domain/webhooks.ts';
import { createWorkflow } from '../../shared/domain/workflows.ts';
import { finished, startRun } from '../../shared/engine/runs.ts';
import { processRunMessage } from '../../shared/engine/worker.ts';
import { flushCounts } from '../../shared/db/counters.ts';
import { RECORD_TTL_MS } from '../../shared/db/retention.ts';
import type { RunMessage } from '../../shared/engine/dispatch.ts';
import { CreateWebhookBody } from '../../shared/schemas/webhooks.ts';
import { takeRunMessages } from '../support/engine.ts';
import { givenAccount } from '../support/fixtures.ts';
import { apiEvent, bearer, invoke } from '../support/http.ts';
import { type Call, describeSteps, recordCalls, sequentialSteps } from './counting.ts';
import { approvalFlow, callbackFlow, forEachFlow, jumpLoopFlow, realisticFlow, retryFlow, setFlow, switchFlow } from './flows.ts';
import { report, runBatch } from './drive.ts';
import { createServer } from 'node:http';
import type { WorkflowDefinition } from '../../shared/engine/definition.ts';

/** The limits a pro account gets in the benchmark: two requests a minute, to see a 429. */
export const BENCH_RATE_LIMITS = { pro: 2, team: 1_000_000, enterprise: 1_000_000 };

/** Run queued run messages through the worker (in-process) until `done` holds for the runs. */
async function drainRuns(until: () => Promise<boolean>) {
  for (let i = 0; i < 30 && !(await until()); i++) {
    for (const m of await takeRunMessages()) await processRunMessage(m, { remainingMs: () => 60_000 });
  }
}

/**
 * Accounts, keys, workflows and webhooks for the benchmarks: a team account with a key-bound webhook
 * and two approvals waiting, and a pro account limited to 2 requests a minute. Needs the emulator
 * environment, and queues of its own (approvals are reached by running the worker on them).
 */
export async function givenBenchData() {
  process.env.RATE_LIMITS = JSON.stringify(BENCH_RATE_LIMITS);
  resetConfig();
  const team = await givenAccount({ plan: 'team' });
  const pro = await givenAccount({ plan: 'pro' });
  const admin = (a: typeof team) =>
    ({ kind: 'session', accountId: a.account.accountId, userId: a.admin.userId, role: 'admin', sessionId: '' }) as const;
  const hookFor = async (a: typeof team) => {
    const key = await createKey(admin(a), { name: 'trigger', scopes: ['WEBHOOK_TRIGGER'], validityDays: 30 });
    const workflow = await createWorkflow(admin(a), { name: 'one step', definition: setFlow(1), recovery: false, editors: [] });
    const webhook = await createWebhook(
      admin(a),
      CreateWebhookBody.parse({ workflowId: workflow.workflowId, name: 'bench', apiKeyId: key.id }),
    );
    return { key, workflow, webhook };
  };
  const [teamHook, proHook] = await Promise.all([hookFor(team), hookFor(pro)]);
  const approvals = await createWorkflow(admin(team), { name: 'approval', definition: approvalFlow(), recovery: false, editors: [] });
  const waiting = await Promise.all(
    [1, 2].map(
      async () => (await startRun({ workflow: approvals, trigger: 'api', variables: {}, startedBy: team.admin.userId })).execution,
    ),
  );
  const read = () => Promise.all(waiting.map((e) => getExecution(e.accountId, e.executionId)));
  await drainRuns(async () => (await read()).every((e) => e?.status === 'WAITING_APPROVAL'));
  const approvalIds = (await read()).map((e) => e?.approvalId as string);
  return { team, pro, teamHook, proHook, approvalIds };
}
export type BenchData = Awaited<ReturnType<typeof givenBenchData>>;

/** A cold instance: no record and no current workflow cached (a workflow's versions stay: they never change). */
export const clearCaches = () => {
  for (const c of Object.values(caches)) c.clear();
  currentWorkflows.clear();
};

/**
 * How long what the record and workflow caches take in is kept (`RECORD_TTL_MS` unless set): a count of
 * a busy instance's reads holds them for as long as it measures, since such an instance reads each
 * once in 5 s over thousands of requests, and a measurement that takes longer (a busy machine) would
 * count re-reads that depend on its speed.
 */
export const holdCaches = (ms = RECORD_TTL_MS) => {
  for (const c of [...Object.values(caches), currentWorkflows]) (c as { ttlMs: number }).ttlMs = ms;
};

export const triggerRequest = (webhookId: string, token: string, body: object = { n: 1 }, sourceIp?: string) =>
  invoke(
    triggerHandler as never,
    apiEvent({
      method: 'POST',
      path: `/api/webhooks/${webhookId}/trigger`,
      params: { webhookId },
      headers: { authorization: `Bearer ${token}` },
      body,
      sourceIp,
    }),
  );

export type RoundTrips = { scenario: string; status: number; calls: number; steps: number; path: string; raw: Call[] };

async function measure(scenario: string, cache: 'cold' | 'warm', fn: () => Promise<{ status: number }>): Promise<RoundTrips> {
  if (cache === 'cold') clearCaches();
  // An instance that wrote its counts just now: what the request counts waits for a later write (`counters.ts`).
  await flushCounts();
  const { result, calls } = await recordCalls(fn);
  const steps = sequentialSteps(calls);
  return {
    scenario: `${scenario} (${cache} cache)`,
    status: result.status,
    calls: calls.length,
    steps: steps.length,
    path: describeSteps(steps),
    raw: calls,
  };
}

const countRuns = async (accountId: string, workflowId: string) => (await listExecutions(accountId, { workflowId }, 100)).items.length;

/**
 * SDK calls and sequential steps of one request, in-process through the route's real handler against
 * the emulators: trigger (cold and warm cache, and rate-limited), approval POST, v1 start, v1 read.
 */
export async function measureRoundTrips(d: BenchData): Promise<RoundTrips[]> {
  const { teamHook, proHook, team } = d;
  const adminKey = bearer(team.adminKey.token);
  const rows: RoundTrips[] = [];
  const trigger = () => triggerRequest(teamHook.webhook.webhookId, teamHook.key.token);
  // The first use of a key in a UTC day costs one more write (today's usage count restarts): not measured.
  await trigger();
  await invoke(
    getExecutionHandler as never,
    apiEvent({ method: 'GET', path: '/api/v1/executions/ex_0', params: { executionId: 'ex_0' }, headers: adminKey }),
  );
  rows.push(await measure('trigger', 'cold', trigger));
  rows.push(await measure('trigger', 'warm', trigger));
  // The same webhook's runs all through the queue (what a workflow with an external step costs the trigger).
  rows.push(await withInline(false, () => measure('trigger, queued run', 'cold', trigger)));
  rows.push(await withInline(false, () => measure('trigger, queued run', 'warm', trigger)));

  // The third request of a minute on the pro account (2 a minute), all three inside one fixed window.
  const proTrigger = () => triggerRequest(proHook.webhook.webhookId, proHook.key.token);
  if (Date.now() % 60_000 > 50_000) await new Promise((r) => setTimeout(r, 60_500 - (Date.now() % 60_000)));
  const admitted = [(await proTrigger()).status, (await proTrigger()).status];
  const before = await countRuns(proHook.webhook.accountId, proHook.workflow.workflowId);
  const limited = await measure('trigger rate-limited', 'warm', proTrigger);
  const written = (await countRuns(proHook.webhook.accountId, proHook.workflow.workflowId)) - before;
  if (String(admitted) !== '200,200' || limited.status !== 429 || written !== 0)
    throw new Error(`rate limit: ${admitted} then ${limited.status}, ${written} executions written by the refused request`);
  rows.push(limited);

  const decide = (approvalId: string) => () =>
    invoke(
      decideHandler as never,
      apiEvent({ method: 'POST', path: '/api/webhook-trigger/approval', headers: adminKey, body: { approvalId, decision: 'approve' } }),
    );
  rows.push(await measure('approval POST', 'cold', decide(d.approvalIds[0] as string)));
  rows.push(await measure('approval POST', 'warm', decide(d.approvalIds[1] as string)));

  const workflowId = teamHook.workflow.workflowId;
  const start = () =>
    invoke(
      startRunHandler as never,
      apiEvent({ method: 'POST', path: `/api/v1/workflows/${workflowId}/runs`, params: { workflowId }, headers: adminKey, body: {} }),
    );
  rows.push(await measure('v1 start', 'cold', start));
  const started = await measure('v1 start', 'warm', start);
  rows.push(started);

  const executionId = (await listExecutions(team.account.accountId, { workflowId }, 1)).items[0]?.executionId as string;
  const read = () =>
    invoke(
      getExecutionHandler as never,
      apiEvent({ method: 'GET', path: `/api/v1/executions/${executionId}`, params: { executionId }, headers: adminKey }),
    );
  rows.push(await measure('v1 read', 'cold', read));
  rows.push(await measure('v1 read', 'warm', read));
  return rows;
}

export type { Execution };

const WRITES = new Set(['PutItem', 'UpdateItem', 'DeleteItem', 'TransactWriteItems', 'BatchWriteItem']);

export type RunCost = { scenario: string; status: string; calls: number; steps: number; writeUnits: number; path: string };

/**
 * What webhook runs cost in DynamoDB from the trigger's 200 to SUCCEEDED, counting included: `runs`
 * triggers through the real handler, then their messages as one batch of the runs worker's real
 * handler (which writes the batch's counts at its end: `counters.ts`), in-process on the emulators,
 * warm (records and workflow version cached, as on a busy service). Calls, write units and steps of
 * the whole (one run alone in its batch), or per run (a batch of several). Calls and sequential steps
 * by the SDK middleware; write units by AWS's sizing rules (`write-units.ts`).
 */
async function webhookRunCost(
  hook: BenchData['teamHook'],
  scenario: string,
  runs = 1,
  /** What the world does while the runs wait (a callback's report), before their next messages. */
  between?: (executionIds: string[]) => Promise<unknown>,
): Promise<RunCost> {
  // Nothing counted earlier is left to write, and the instance's last flush counts as just made for as long
  // as the triggers take (a second on AWS; more on a loaded machine): the triggers write no counts, so a
  // batch's counts are written once by the worker however slowly this machine runs the triggers.
  await flushCounts();
  await flushCounts(Date.now() + 60 * 60_000);
  await warmCaches(hook);
  const triggered = await recordCalls(async () => {
    const ids: string[] = [];
    for (let i = 0; i < runs; i++) ids.push((await triggerRequest(hook.webhook.webhookId, hook.key.token)).json.executionId as string);
    return ids;
  });
  const executionIds = triggered.result;
  // Runs that finished in their trigger (docs/runs-and-events.md) have no message for the worker.
  const queued = (await Promise.all(executionIds.map((id) => getExecution(hook.webhook.accountId, id)))).some(
    (e) => !finished(e ?? { status: 'PENDING' }),
  );
  const messages: RunMessage[] = [];
  for (let i = 0; i < 20 && queued && messages.length < runs; i++)
    messages.push(...(await takeRunMessages()).filter((m) => executionIds.includes(m.executionId)));
  // Taking the messages off the queue may take longer than the caches keep a record.
  await warmCaches(hook);
  const worked = queued ? await recordCalls(() => runBatch(messages, 'm')) : { calls: [] as Call[] };
  const later: Call[] = [];
  if (between) {
    const answered = await recordCalls(async () => {
      await between(executionIds);
      const next: RunMessage[] = [];
      for (let i = 0; i < 20 && next.length < runs; i++)
        next.push(...(await takeRunMessages()).filter((m) => executionIds.includes(m.executionId)));
      await runBatch(next, 'n');
    });
    later.push(...answered.calls);
  }
  const ended = await Promise.all(executionIds.map((id) => getExecution(hook.webhook.accountId, id)));
  const run = [...triggered.calls, ...worked.calls, ...later].filter((c) => c.service === 'dynamodb');
  const steps = sequentialSteps(run);
  return {
    scenario,
    status: ended.every((e) => e?.status === 'SUCCEEDED') ? 'SUCCEEDED' : ended.map((e) => e?.status ?? 'missing').join(','),
    calls: run.length / runs,
    steps: runs === 1 ? steps.length : 0,
    writeUnits: run.reduce((n, c) => n + c.wcu, 0) / runs,
    path: runs === 1 ? describeSteps(steps) : '',
  };
}

/** A warm instance: the webhook and key records and the workflow as it is now read afresh into their caches (5 s). */
async function warmCaches(hook: BenchData['teamHook']) {
  clearCaches();
  forgetWorkflow(hook.webhook.accountId, hook.workflow.workflowId);
  await readThrough([webhookRead(hook.webhook.webhookId), keyRead(hook.key.id)]);
  await currentWorkflow(hook.webhook.accountId, hook.workflow.workflowId);
}

/** The hooks made on each bench's data, by name and definition: a plan allows only so many webhooks. */
const hooks = new WeakMap<BenchData, Map<string, Promise<BenchData['teamHook']>>>();

/** A key-bound webhook of the team account on an n-step `set` workflow (or the definition given); the same one for the same name and definition. */
export function hookOn(d: BenchData, steps: number, definition: WorkflowDefinition = setFlow(steps), name = `${steps} steps`) {
  const made = hooks.get(d) ?? new Map<string, Promise<BenchData['teamHook']>>();
  hooks.set(d, made);
  const id = `${name}\n${JSON.stringify(definition)}`;
  const hook = made.get(id) ?? makeHook(d, definition, name);
  made.set(id, hook);
  return hook;
}

async function makeHook(d: BenchData, definition: WorkflowDefinition, name: string): Promise<BenchData['teamHook']> {
  const a = d.team;
  const admin = { kind: 'session', accountId: a.account.accountId, userId: a.admin.userId, role: 'admin', sessionId: '' } as const;
  const workflow = await createWorkflow(admin, { name, definition, recovery: false, editors: [] });
  const webhook = await createWebhook(
    admin,
    CreateWebhookBody.parse({ workflowId: workflow.workflowId, name: `bench ${name}`, apiKeyId: d.teamHook.key.id }),
  );
  return { key: d.teamHook.key, workflow, webhook };
}

/** `fn` with webhook runs that may finish in their trigger (`on`, the default) or all queued (`INLINE_RUNS`). */
export async function withInline<T>(on: boolean, fn: () => Promise<T>): Promise<T> {
  const before = process.env.INLINE_RUNS;
  process.env.INLINE_RUNS = on ? 'on' : 'off';
  resetConfig();
  try {
    return await fn();
  } finally {
    if (before === undefined) delete process.env.INLINE_RUNS;
    else process.env.INLINE_RUNS = before;
    resetConfig();
  }
}

/** The runs worker's batch size on AWS (infra/constructs/workers.ts): a busy webhook's runs arrive in batches of up to 10. */
const BATCH = 10;

/**
 * Run costs: a one-step and a five-step webhook run (warm), each alone in its worker batch, what
 * each further `set` step adds, and a one-step run in a full batch of one webhook's runs.
 */
export async function measureRunCosts(d: BenchData): Promise<RunCost[]> {
  try {
    return [...(await withInline(false, () => measureQueuedRunCosts(d))), ...(await measureInlineRunCosts(d))];
  } finally {
    await flushCounts(); // what the last runs counted, and a last flush that is now, not to come (`webhookRunCost`)
  }
}

/**
 * Runs that finish in their trigger (docs/runs-and-events.md): a one-step and a five-step webhook run,
 * a switch and a 100-item loop, each written once, ended, by the trigger (warm); and the realistic
 * workflow, whose trigger runs its first `set` and hands it to the worker at its http_request (a
 * listener on 127.0.0.1).
 */
async function measureInlineRunCosts(d: BenchData): Promise<RunCost[]> {
  const inline = async (hook: BenchData['teamHook'], scenario: string) => {
    await webhookRunCost(hook, 'warm-up');
    return webhookRunCost(hook, scenario);
  };
  const listener = createServer((req, res) => req.resume().on('end', () => res.writeHead(200).end('{}')));
  await new Promise<void>((r) => listener.listen(0, '127.0.0.1', r));
  process.env.HTTP_STEP_ALLOWLIST = '127.0.0.1/32';
  resetConfig();
  try {
    return [
      await inline(d.teamHook, 'finished in its trigger: webhook run, 1 set step'),
      await inline(await hookOn(d, 5), 'finished in its trigger: webhook run, 5 set steps'),
      await inline(await hookOn(d, 0, switchFlow(), '3-case switch'), 'finished in its trigger: webhook run, 3-case switch + 1 set'),
      await inline(
        await hookOn(d, 0, forEachFlow(100), 'for_each of 100'),
        'finished in its trigger: webhook run, for_each of 100 items × 1 set',
      ),
      await inline(
        await hookOn(d, 0, realisticFlow(`http://127.0.0.1:${(listener.address() as { port: number }).port}`), 'realistic'),
        'handed to the worker at its http_request: webhook run, set → http_request → switch → set',
      ),
    ];
  } finally {
    listener.closeAllConnections();
    listener.close();
  }
}

/** The queued path (every run through the runs queue and the worker), whatever its steps. */
async function measureQueuedRunCosts(d: BenchData): Promise<RunCost[]> {
  const five = await hookOn(d, 5);
  // Each after a warm-up: the workflow's version is then cached for good, and the first use of a key
  // in a UTC day (one more write) is behind.
  const warm = async (hook: BenchData['teamHook'], scenario: string, runs = 1) => {
    await webhookRunCost(hook, 'warm-up');
    return webhookRunCost(hook, scenario, runs);
  };
  const one = await warm(d.teamHook, 'webhook run, 1 set step, trigger 200 → SUCCEEDED');
  const many = await warm(five, 'webhook run, 5 set steps, trigger 200 → SUCCEEDED');
  const batched = await warm(d.teamHook, `webhook run, 1 set step, ${BATCH} runs of one webhook in one worker batch, per run`, BATCH);
  const perStep = {
    scenario: 'each further set step',
    status: many.status,
    calls: (many.calls - one.calls) / 4,
    steps: (many.steps - one.steps) / 4,
    writeUnits: (many.writeUnits - one.writeUnits) / 4,
    path: '',
  };
  // Control flow (docs/workflows.md "Control flow"): the switch, the jump and the loop's steps ride in the run's one write.
  const switched = await warm(
    await hookOn(d, 0, switchFlow(), '3-case switch'),
    'webhook run, 3-case switch + 1 set, trigger 200 → SUCCEEDED',
  );
  const looped = await warm(
    await hookOn(d, 0, forEachFlow(100), 'for_each of 100'),
    'webhook run, for_each of 100 items × 1 set, trigger 200 → SUCCEEDED',
  );
  // A long run (docs/performance.md "Long runs"): past 64 event items its progress goes out in checkpoints that fit a transaction.
  const jumped = await warm(
    await hookOn(d, 0, jumpLoopFlow(75), 'next loop of 150'),
    'webhook run, next loop of 150 step executions (set, switch back), trigger 200 → SUCCEEDED',
  );
  return [one, many, perStep, batched, switched, looped, ...(await measureWaitCosts(d)), jumped];
}

/**
 * The waiting constructs, each a webhook run alone in its batch, warm, against a listener on
 * 127.0.0.1: an http_request retried twice (its target answers 503, 503, 200; the 1 s backoffs are
 * slept in the invocation) and a wait_for_callback round trip (the wait, the report through its
 * route in-process, the run's next message to SUCCEEDED).
 */
async function measureWaitCosts(d: BenchData): Promise<RunCost[]> {
  const seen = new Map<string, number>();
  const tokens = new Map<string, { url: string; token: string }>();
  const listener = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => {
      body += String(c);
    });
    req.on('end', () => {
      const [, kind, id = ''] = (req.url ?? '').split('/');
      const n = (seen.get(id) ?? 0) + 1;
      seen.set(id, n);
      if (kind === 'capture') tokens.set(id, JSON.parse(body));
      res.writeHead(kind === 'flaky' && n <= 2 ? 503 : 200).end('{}');
    });
  });
  await new Promise<void>((r) => listener.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(listener.address() as { port: number }).port}`;
  process.env.HTTP_STEP_ALLOWLIST = '127.0.0.1/32';
  resetConfig();
  try {
    const retried = await hookOn(d, 1, retryFlow(base), 'retried http_request');
    await webhookRunCost(retried, 'warm-up');
    const retry = await webhookRunCost(retried, 'webhook run, 1 http_request retried (503, 503, 200: 3 attempts), trigger 200 → SUCCEEDED');
    const waits = await hookOn(d, 1, callbackFlow(base), 'callback round trip');
    const reportAll = async (ids: string[]) => {
      for (const id of ids) {
        const c = tokens.get(id);
        if (!c) throw new Error(`no callback request for ${id}`);
        await report(c);
      }
    };
    await webhookRunCost(waits, 'warm-up', 1, reportAll);
    const roundTrip = await webhookRunCost(
      waits,
      'webhook run, 1 wait_for_callback: wait, report (its route), resume, trigger 200 → SUCCEEDED',
      1,
      reportAll,
    );
    return [retry, roundTrip];
  } finally {
    listener.closeAllConnections();
    listener.close();
  }
}

/** Start a run of an n-step `set` workflow and take its queue message (others on the queue are left). */
async function queuedRun(d: BenchData, steps: number) {
  const a = d.team;
  const workflow = await createWorkflow(
    { accountId: a.account.accountId, userId: a.admin.userId, role: 'admin' },
    { name: `${steps} steps`, definition: setFlow(steps), recovery: false, editors: [] },
  );
  const { execution } = await startRun({ workflow, trigger: 'api', variables: { n: 1 }, startedBy: a.admin.userId });
  for (let i = 0; i < 20; i++) {
    const m = (await takeRunMessages()).find((x) => x.executionId === execution.executionId);
    if (m) return { execution, message: m };
  }
  throw new Error('run message not received');
}

/**
 * The worker on n-step `set` workflows, in-process against the emulators: DynamoDB writes of the
 * whole run (claim, one checkpoint per step, finish) and the marginal writes per step, and steps/s.
 */
export async function measureWorker(d: BenchData, runs = 3) {
  const run = async (steps: number) => {
    const { execution, message } = await queuedRun(d, steps);
    const t = performance.now();
    const { calls } = await recordCalls(() => processRunMessage(message, { remainingMs: () => 60_000 }));
    const ms = performance.now() - t;
    const done = await getExecution(execution.accountId, execution.executionId);
    if (done?.status !== 'SUCCEEDED') throw new Error(`run ended ${done?.status}`);
    return { writes: calls.filter((c) => c.service === 'dynamodb' && WRITES.has(c.command)).length, ms };
  };
  const one = await run(1);
  const twenty: { writes: number; ms: number }[] = [];
  for (let i = 0; i < runs; i++) twenty.push(await run(20));
  const rates = twenty.map((r) => 20 / (r.ms / 1000));
  const sorted = [...rates].sort((x, y) => x - y);
  return {
    writesPerRun20: twenty[0]?.writes,
    writesPerRun1: one.writes,
    writesPerStep: ((twenty[0]?.writes ?? 0) - one.writes) / 19,
    stepsPerSecondMedian: Math.round(sorted[Math.floor(sorted.length / 2)] ?? 0),
    stepsPerSecondMin: Math.round(sorted[0] ?? 0),
    stepsPerSecondMax: Math.round(sorted.at(-1) ?? 0),
  };
}

const percentile = (xs: readonly number[], p: number) =>
  Math.round(([...xs].sort((a, b) => a - b)[Math.floor(xs.length * p)] ?? 0) * 10) / 10;

/**
 * Where a warm trigger's time goes on the emulators: `n` triggers in-process through the handler, one
 * at a time, and each SDK call's time (its own middleware, so no other counting is in the way).
 */
export async function measureTriggerTimes(d: BenchData, n = 200) {
  const times: Record<string, number[]> = {};
  const clients = [
    ['DynamoDB', db()],
    ['SQS', queue()],
  ] as const;
  const name = 'benchTriggerTimes';
  for (const [service, client] of clients) {
    (client.middlewareStack as MiddlewareStack<object, object>).add(
      (next, context) => async (args) => {
        const start = performance.now();
        try {
          return await next(args);
        } finally {
          const key = `${service} ${String(context.commandName).replace(/Command$/, '')}`;
          times[key] = [...(times[key] ?? []), performance.now() - start];
        }
      },
      { step: 'initialize', name },
    );
  }
  const total: number[] = [];
  try {
    for (let i = 0; i < n; i++) {
      const start = performance.now();
      await triggerRequest(d.teamHook.webhook.webhookId, d.teamHook.key.token);
      total.push(performance.now() - start);
    }
  } finally {
    for (const [, client] of clients) client.middlewareStack.remove(name);
  }
  const warm = (xs: number[]) => xs.slice(Math.floor(xs.length / 10));
  return [
    { what: 'trigger, in-process', p50ms: percentile(warm(total), 0.5), p99ms: percentile(warm(total), 0.99) },
    // Calls of every trigger (the cold first one's reads are left out).
    ...Object.entries(times)
      .filter(([, xs]) => xs.length >= n)
      .map(([what, xs]) => ({ what, p50ms: percentile(warm(xs), 0.5), p99ms: percentile(warm(xs), 0.99) })),
  ];
}
