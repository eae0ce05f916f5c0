// `npm run bench -- fairness [--runs-concurrency N] [--heavy-runs-concurrency N]`: fair tenants on the
// local stack (docs/performance.md "Fair tenants"). Account A starts 1,000 runs whose http_request waits
// 2 s (a slow server on 127.0.0.1, a process of its own); once they are all in (A's backlog waits in the runs queues), account
// B starts 50 one-step runs. B's time from trigger to finish alone, under A's load with the two runs
// lanes (A is heavy: its runs past HEAVY_ACCOUNT_REQUESTS_PER_MINUTE go to the heavy lane,
// shared/engine/lanes.ts; both queues fair, the account being the messages' group), and, for
// comparison, under the same load on one lane (the heavy lane's queue unset: as before the lanes) with
// the fair queue and with a queue that hands out the oldest first (a local-only tag: as before fair
// queues). The check: B's p99 under load with the two lanes ≤ 2× B alone. The main lane runs as many
// runs-worker invocations as a deployed stack does (`runsWorkerConcurrency`, 50), the heavy lane as many
// as this machine can serve (FAIRNESS.heavyRunsConcurrency, below), unless told otherwise; A starts
// enough runs to leave a backlog behind them all (at least 500; twice the runs the main lane's
// invocations hold at once).
import { spawn } from 'node:child_process';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { GetQueueAttributesCommand, type SendMessageCommandInput, TagQueueCommand, UntagQueueCommand } from '@aws-sdk/client-sqs';
import { IN_ORDER_TAG } from '../../infra/local/fair-queue.ts';
import { startLocalStack } from '../../infra/local/stack.ts';
import { DEFAULTS } from '../../infra/settings.ts';
import { currentInvocation } from '../../infra/local/iam.ts';
import { db, queue } from '../../shared/clients.ts';
import { config, resetConfig } from '../../shared/config.ts';
import { type Execution, getExecution } from '../../shared/db/entities/execution.ts';
import { countersFor } from '../../shared/db/entities/rate-counters.ts';
import { createKey } from '../../shared/domain/keys.ts';
import { createWebhook } from '../../shared/domain/webhooks.ts';
import { createWorkflow } from '../../shared/domain/workflows.ts';
import { WorkflowDefinition } from '../../shared/engine/definition.ts';
import { CreateWebhookBody } from '../../shared/schemas/webhooks.ts';
import { useOwnQueues } from '../support/engine.ts';
import { givenAccount } from '../support/fixtures.ts';
import { setFlow } from './flows.ts';

export const FAIRNESS = {
  noisyRuns: 500,
  noisyWaitMs: 2_000,
  quietRuns: 50,
  clientConnections: 50,
  gate: 2,
  /**
   * The heavy lane's invocations here. A deployed stack's 50 (`heavyRunsWorkerConcurrency`) would run A's
   * 2-second runs 500 at a time, 250 a second: three times what this machine runs at all (the load bench),
   * and their DynamoDB calls (about 1,000 a second) past what DynamoDB Local serves on the two cores every
   * function shares (450 to 800). B's triggers then wait for the emulator, which on AWS is no shared
   * resource (each instance has its own connections, A's items their own partitions). Ten run A's at 50
   * a second, within the machine: what B then measures is the queues. `--heavy-runs-concurrency 50` runs
   * the deployed size (docs/performance.md "Fair tenants" has both).
   */
  heavyRunsConcurrency: 10,
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A's target: a server answering after `waitMs`, in a process of its own, as any host a run calls is.
 * In this process it shared the event loop with the whole local stack: hundreds of A's requests arriving
 * at once were taken up to 8 s after they were sent (traced 2026-12-03: the client's request written, the
 * server's handler called 8 s later), past the step's 10 s timeout, and the bench stopped on A's failed runs.
 */
async function startSlowServer(waitMs: number) {
  const script = `const s = require('node:http').createServer((q, r) => setTimeout(() => r.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'), ${waitMs}));
s.listen({ port: 0, host: '127.0.0.1', backlog: 4096 }, () => console.log(s.address().port));`;
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'], env: { PATH: process.env.PATH } });
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout.once('data', (d) => resolve(Number(String(d).trim())));
    child.once('exit', (code) => reject(new Error(`the slow server exited (${code}) before it listened`)));
  });
  return { url: `http://127.0.0.1:${port}/slow`, stop: () => child.kill() };
}
export const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;

/** An account with a webhook that starts `definition`, and its trigger key (or, with `secretKey`, a signed webhook). */
export async function tenant(definition: WorkflowDefinition, { secretKey }: { secretKey?: string } = {}) {
  const a = await givenAccount({ plan: 'team' });
  const owner = { kind: 'session', accountId: a.account.accountId, userId: a.admin.userId, role: 'admin', sessionId: '' } as const;
  const key = await createKey(owner, { name: 'trigger', scopes: ['WEBHOOK_TRIGGER'], validityDays: 30 });
  const workflow = await createWorkflow(owner, { name: 'fairness', definition, recovery: false, editors: [] });
  const webhook = await createWebhook(
    owner,
    CreateWebhookBody.parse({ workflowId: workflow.workflowId, name: 'fairness', ...(secretKey ? { secretKey } : { apiKeyId: key.id }) }),
  );
  return {
    accountId: a.account.accountId,
    webhookId: webhook.webhookId,
    path: `/api/webhooks/${webhook.webhookId}/trigger`,
    token: key.token,
  };
}
export type Tenant = Awaited<ReturnType<typeof tenant>>;

type Sent = { executionId: string; sentAt: number; answeredAt: number };

/** Trigger `n` runs of `t`, `connections` requests at a time; each run's id and when its trigger was sent. */
async function trigger(base: string, t: Tenant, n: number, connections: number) {
  const started: Sent[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(n, connections) }, async () => {
      while (next < n) {
        next++;
        const sentAt = Date.now();
        const res = await fetch(`${base}${t.path}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/json' },
          body: '{"n":1}',
        });
        const body = (await res.json()) as { executionId?: string };
        if (res.status >= 300 || !body.executionId) throw new Error(`trigger answered ${res.status}: ${JSON.stringify(body)}`);
        started.push({ executionId: body.executionId, sentAt, answeredAt: Date.now() });
      }
    }),
  );
  return started;
}

/** Wait until every run has ended; per run, the ms from its trigger's send to its answer and to the run's end. */
async function finished(t: Tenant, runs: Sent[], timeoutMs = 300_000) {
  const deadline = Date.now() + timeoutMs;
  const ended = new Map<string, Execution>();
  while (ended.size < runs.length) {
    if (Date.now() > deadline) throw new Error(`${runs.length - ended.size} runs of ${t.accountId} did not end in ${timeoutMs} ms`);
    for (const r of runs) {
      if (ended.has(r.executionId)) continue;
      const e = await getExecution(t.accountId, r.executionId);
      if (e?.finishedAt !== undefined) {
        if (e.status !== 'SUCCEEDED') throw new Error(`run ${r.executionId} ended ${e.status}: ${JSON.stringify(e.error)}`);
        ended.set(r.executionId, e);
      }
    }
    if (ended.size < runs.length) await sleep(250);
  }
  const sorted = (ms: number[]) => ms.sort((x, y) => x - y);
  return {
    total: sorted(runs.map((r) => (ended.get(r.executionId)?.finishedAt as number) - r.sentAt)),
    answer: sorted(runs.map((r) => r.answeredAt - r.sentAt)),
    /** From the trigger's answer to the run's end: the queue and the worker. */
    after: sorted(runs.map((r) => (ended.get(r.executionId)?.finishedAt as number) - r.answeredAt)),
  };
}

/**
 * Trigger → finish, split into the trigger's answer and the rest (the queue and the worker), and how
 * late the process's event loop ran callbacks meanwhile (every function of the local stack shares it).
 */
const row = (scenario: string, ms: Awaited<ReturnType<typeof finished>> & { loopDelayP99?: number }) => ({
  scenario,
  runs: ms.total.length,
  p50ms: percentile(ms.total, 50),
  p99ms: percentile(ms.total, 99),
  maxMs: ms.total.at(-1) ?? NaN,
  'answer p50': percentile(ms.answer, 50),
  'answer p99': percentile(ms.answer, 99),
  'after answer p50': percentile(ms.after, 50),
  'after answer p99': percentile(ms.after, 99),
  ...(ms.loopDelayP99 === undefined ? {} : { 'loop delay p99': Math.round(ms.loopDelayP99) }),
});

export async function fairnessPart(
  runsConcurrency: number = DEFAULTS.runsWorkerConcurrency,
  heavyRunsConcurrency: number = FAIRNESS.heavyRunsConcurrency,
) {
  const noisyCount = Math.max(FAIRNESS.noisyRuns, runsConcurrency * 10 * 2);
  const slow = await startSlowServer(FAIRNESS.noisyWaitMs);
  const slowUrl = slow.url;
  // Fresh queues; the runs' http_request may call the slow server on 127.0.0.1 (docs/local-mode.md).
  // B's one-step runs go through the queue (they would finish in their trigger: docs/runs-and-events.md),
  // as any run with an external step does: the bench measures the queues' fairness. The heavy-account
  // threshold is the setting's default (250 requests a minute, HEAVY_ACCOUNT_REQUESTS_PER_MINUTE).
  // The team plan at 30,000 requests a minute: no trigger of the bench is refused, and, as every default
  // plan, its account is metered on one counter, so its requests are counted exactly (the bench's other
  // parts' 1,000,000 spreads it over 34 counters, whose estimate moves in steps of 34).
  const rateLimits = process.env.RATE_LIMITS;
  process.env.RATE_LIMITS = JSON.stringify({ ...JSON.parse(rateLimits ?? '{}'), team: 30_000 });
  await useOwnQueues({ HTTP_STEP_ALLOWLIST: '127.0.0.1/32', INLINE_RUNS: 'off' });
  const { RUNS_QUEUE_URL: runsQueue, HEAVY_RUNS_QUEUE_URL: heavyQueue } = config();
  if (!heavyQueue) throw new Error('the heavy lane has no queue');
  const stack = await startLocalStack({ host: '127.0.0.1', port: 0, emulators: 'reuse', runsConcurrency, heavyRunsConcurrency });
  // Which lane each account's run messages went to, per phase (every SendMessage of the runs queues).
  let phase = 'warm-up';
  const lanes = new Map<string, Map<string, { main: number; heavy: number }>>();
  const MIDDLEWARE = 'bench-count-lanes';
  queue().middlewareStack.add(
    (next, context) => async (args) => {
      const out = await next(args);
      const input = args.input as SendMessageCommandInput;
      if (context.commandName === 'SendMessageCommand' && (input.QueueUrl === runsQueue || input.QueueUrl === heavyQueue)) {
        const byAccount = lanes.get(phase) ?? lanes.set(phase, new Map()).get(phase)!;
        const n =
          byAccount.get(input.MessageGroupId ?? '') ??
          byAccount.set(input.MessageGroupId ?? '', { main: 0, heavy: 0 }).get(input.MessageGroupId ?? '')!;
        n[input.QueueUrl === heavyQueue ? 'heavy' : 'main']++;
      }
      return out;
    },
    { step: 'initialize', name: MIDDLEWARE },
  );
  // Where B's trigger spends its time: each AWS call of the webhook trigger's function while B's runs
  // go through, its time (retries included) and how many calls of the same client were in flight when
  // it began (every function of the local stack shares one client of 50 sockets per service; a Lambda
  // instance has its own).
  let bRound = false;
  const inFlight = { dynamodb: 0, sqs: 0 };
  /** Calls of every function completed while B's triggers went out (how busy the emulators were). */
  const completed = { dynamodb: 0, sqs: 0 };
  const triggerCalls: { client: 'dynamodb' | 'sqs'; ms: number; inFlight: number }[] = [];
  const TIMING = 'bench-time-trigger-calls';
  const timing = (client: 'dynamodb' | 'sqs') => (next: (args: any) => Promise<any>) => async (args: any) => {
    const start = performance.now();
    const before = inFlight[client]++;
    try {
      return await next(args);
    } finally {
      inFlight[client]--;
      if (bRound) completed[client]++;
      if (bRound && currentInvocation()?.fn === 'http-webhooks-trigger')
        triggerCalls.push({ client, ms: performance.now() - start, inFlight: before });
    }
  };
  db().middlewareStack.add(timing('dynamodb'), { step: 'initialize', name: TIMING });
  queue().middlewareStack.add(timing('sqs'), { step: 'initialize', name: TIMING });
  /** The trigger's calls of B's last round, by client: p50 / p99 ms and the share begun with 50 or more in flight. */
  const triggerCallStats = () => {
    const out = Object.fromEntries(
      (['dynamodb', 'sqs'] as const).map((client) => {
        const of = triggerCalls.filter((x) => x.client === client);
        const ms = of.map((x) => x.ms).sort((a, b) => a - b);
        return [
          client,
          {
            calls: of.length,
            p50: Math.round(percentile(ms, 50)),
            p99: Math.round(percentile(ms, 99)),
            queued: Math.round((100 * of.filter((x) => x.inFlight >= 50).length) / Math.max(1, of.length)),
          },
        ];
      }),
    );
    triggerCalls.length = 0;
    return out as Record<'dynamodb' | 'sqs', { calls: number; p50: number; p99: number; queued: number }>;
  };
  try {
    const noisy = await tenant(
      WorkflowDefinition.parse({ steps: [{ id: 'call', type: 'http_request', method: 'GET', url: slowUrl, timeoutMs: 10_000 }] }),
    );
    const quiet = await tenant(setFlow(1));
    if (countersFor(config().rateLimits.team) !== 1) throw new Error('the tenants must be metered on one counter');
    // The warm-up's other quiet account: B's own triggers stay within the threshold (B sends 250 in all, never over it).
    const warmer = await tenant(setFlow(1));
    const c = FAIRNESS.clientConnections;
    // A warm-up (caches, DynamoDB Local's JIT, the slow server's connections): A's, B's at its measured size
    // once (its own caches) and another account's of the same runs, then B alone.
    await finished(noisy, await trigger(stack.url, noisy, 40, 10));
    await finished(warmer, await trigger(stack.url, warmer, FAIRNESS.quietRuns, c));
    await finished(quiet, await trigger(stack.url, quiet, FAIRNESS.quietRuns, c));
    /** B's 50 runs, and the event loop's delay (ms, p99) while they went through. */
    const quietRound = async () => {
      const loop = monitorEventLoopDelay({ resolution: 10 });
      loop.enable();
      completed.dynamodb = 0;
      let samples = 0;
      let sum = 0;
      const sampler = setInterval(() => {
        samples++;
        sum += inFlight.dynamodb;
      }, 20);
      bRound = true;
      const began = performance.now();
      const cpu = process.cpuUsage();
      const sent = await trigger(stack.url, quiet, FAIRNESS.quietRuns, c);
      const seconds = (performance.now() - began) / 1000;
      const { user, system } = process.cpuUsage(cpu);
      bRound = false;
      clearInterval(sampler);
      const dynamodb = {
        perSecond: Math.round(completed.dynamodb / seconds),
        inFlight: Math.round(sum / Math.max(1, samples)),
        // The bench process's CPU while B's triggers went out, in % of one core: every function, and the bench's client.
        cpu: Math.round((user + system) / 1e4 / seconds),
      };
      const ms = await finished(quiet, sent);
      loop.disable();
      return { ...ms, loopDelayP99: loop.percentile(99) / 1e6, calls: { ...triggerCallStats(), all: dynamodb } };
    };
    phase = 'alone';
    const alone = await quietRound();
    const waiting = async (QueueUrl: string) => {
      const { Attributes = {} } = await queue().send(
        new GetQueueAttributesCommand({
          QueueUrl,
          AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
        }),
      );
      // local-aws-sqs counts the messages in flight in ApproximateNumberOfMessages too.
      return Number(Attributes.ApproximateNumberOfMessages) - Number(Attributes.ApproximateNumberOfMessagesNotVisible);
    };
    /** A's runs go in (its backlog waits in the runs queues), then B's 50; both until every run has ended. */
    const underLoad = async (name: string) => {
      phase = name;
      const noisyRuns = await trigger(stack.url, noisy, noisyCount, c);
      // How long A's triggers took in all: its backlog is what the lane could not run meanwhile.
      const triggeredInMs = Math.max(...noisyRuns.map((r) => r.answeredAt)) - Math.min(...noisyRuns.map((r) => r.sentAt));
      const backlog = { main: await waiting(runsQueue), heavy: await waiting(heavyQueue), triggeredInMs };
      const quietMs = await quietRound();
      return { quietMs, noisyMs: await finished(noisy, noisyRuns), backlog };
    };
    const twoLanes = await underLoad('two lanes');
    // One lane, as before the heavy lane: without its queue every run message goes to the runs queue.
    delete process.env.HEAVY_RUNS_QUEUE_URL;
    resetConfig();
    let oneLane: Awaited<ReturnType<typeof underLoad>>;
    let inOrder: Awaited<ReturnType<typeof underLoad>>;
    try {
      oneLane = await underLoad('one lane, fair queue');
      // And on a runs queue that hands out the oldest messages first, as before fair queues (a local-only tag).
      await queue().send(new TagQueueCommand({ QueueUrl: runsQueue, Tags: { [IN_ORDER_TAG]: 'true' } }));
      inOrder = await underLoad('one lane, oldest first').finally(() =>
        queue().send(new UntagQueueCommand({ QueueUrl: runsQueue, TagKeys: [IN_ORDER_TAG] })),
      );
    } finally {
      process.env.HEAVY_RUNS_QUEUE_URL = heavyQueue;
      resetConfig();
    }
    const rows = [
      row('B alone', alone),
      row("B under A's load, two lanes (fair queues)", twoLanes.quietMs),
      row("B under A's load, one lane, fair queue", oneLane.quietMs),
      row("B under A's load, one lane, oldest first", inOrder.quietMs),
      row(`A: ${noisyCount} runs, two lanes`, twoLanes.noisyMs),
    ];
    const ratioOf = (ms: Awaited<ReturnType<typeof finished>>) =>
      Math.round((percentile(ms.total, 99) / percentile(alone.total, 99)) * 100) / 100;
    const ratio = ratioOf(twoLanes.quietMs);
    const held = ratio <= FAIRNESS.gate;
    const laneCounts = Object.fromEntries(
      [...lanes].map(([p, byAccount]) => [
        p,
        {
          A: byAccount.get(noisy.accountId) ?? { main: 0, heavy: 0 },
          B: byAccount.get(quiet.accountId) ?? { main: 0, heavy: 0 },
        },
      ]),
    );
    console.log(
      `\nFair tenants: B's ${FAIRNESS.quietRuns} one-step runs, trigger → finish (ms), alone and after A's ${noisyCount} runs of a ${FAIRNESS.noisyWaitMs / 1000} s http_request; ${runsConcurrency} runs-worker invocations of up to 10 on the main lane, ${heavyRunsConcurrency} on the heavy lane (threshold ${config().HEAVY_ACCOUNT_REQUESTS_PER_MINUTE} requests a minute)`,
    );
    const took = (b: { triggeredInMs: number }) => `${(b.triggeredInMs / 1000).toFixed(1)} s`;
    console.log(
      `A's messages waiting when B began (and the time A's ${noisyCount} triggers took): two lanes ${twoLanes.backlog.main} main + ${twoLanes.backlog.heavy} heavy (${took(twoLanes.backlog)}); one lane, fair ${oneLane.backlog.main} (${took(oneLane.backlog)}); one lane, oldest first ${inOrder.backlog.main} (${took(inOrder.backlog)})`,
    );
    console.log(
      `Run messages by lane: ${Object.entries(laneCounts)
        .map(([p, { A, B }]) => `${p}: A ${A.main} main / ${A.heavy} heavy, B ${B.main} main / ${B.heavy} heavy`)
        .join('; ')}`,
    );
    console.table(rows);
    console.log(
      `B's triggers' AWS calls (ms p50 / p99, % begun with 50 or more of the client's calls in flight): ${[
        ['alone', alone],
        ['two lanes', twoLanes.quietMs],
        ['one lane, fair', oneLane.quietMs],
        ['one lane, oldest first', inOrder.quietMs],
      ]
        .map(
          ([name, r]) =>
            `${name}: DynamoDB ${(r as typeof alone).calls.dynamodb.p50} / ${(r as typeof alone).calls.dynamodb.p99} (${(r as typeof alone).calls.dynamodb.queued} %), SQS ${(r as typeof alone).calls.sqs.p50} / ${(r as typeof alone).calls.sqs.p99} (${(r as typeof alone).calls.sqs.queued} %), every function's DynamoDB calls meanwhile ${(r as typeof alone).calls.all.perSecond}/s, ${(r as typeof alone).calls.all.inFlight} in flight on average, the bench process at ${(r as typeof alone).calls.all.cpu} % of a core`,
        )
        .join('; ')}`,
    );
    console.log(
      `B's p99 under load / alone: two lanes ${ratio} (gate ≤ ${FAIRNESS.gate}): ${held ? 'holds' : 'FAILS'}; one lane, fair queue ${ratioOf(oneLane.quietMs)}; one lane, oldest first ${ratioOf(inOrder.quietMs)}`,
    );
    return {
      rows,
      ratio,
      held,
      oneLaneRatio: ratioOf(oneLane.quietMs),
      inOrderRatio: ratioOf(inOrder.quietMs),
      backlog: { twoLanes: twoLanes.backlog, oneLane: oneLane.backlog, inOrder: inOrder.backlog },
      lanes: laneCounts,
    };
  } finally {
    queue().middlewareStack.remove(MIDDLEWARE);
    queue().middlewareStack.remove(TIMING);
    db().middlewareStack.remove(TIMING);
    if (rateLimits === undefined) delete process.env.RATE_LIMITS;
    else process.env.RATE_LIMITS = rateLimits;
    resetConfig();
    await stack.stop();
    slow.stop();
  }
}
