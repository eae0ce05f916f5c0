import { startLocalStack } from '../../infra/local/stack.ts';
import { config, resetConfig } from '../../shared/config.ts';
import { listEvents } from '../../shared/db/entities/run-events.ts';
import { getExecution, listExecutions } from '../../shared/db/entities/execution.ts';
import { createWorkflow } from '../../shared/domain/workflows.ts';
import { runsQueueBacklog } from '../../shared/engine/dispatch.ts';
import { startRun } from '../../shared/engine/runs.ts';
import { useOwnQueues } from '../support/engine.ts';
import { approvalFlow } from './flows.ts';
import { runLoad } from './autocannon.ts';
import type { LoadResult, LoadSpec } from './load-client.ts';
import type { BenchData } from './scenarios.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Wait until the runs queues (both lanes: a loaded account's runs go to the heavy lane once it is over
 * the threshold, shared/engine/lanes.ts) are empty and nothing is in flight: the workers have caught up.
 */
async function runsQueueDrained(timeoutMs = 120_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const left = await runsQueueBacklog();
    if (left === 0) return;
    if (Date.now() > deadline) throw new Error(`runs queues not drained: ${left} messages ready, in flight or delayed`);
    await sleep(200);
  }
}

/** Run `fn` over `items`, `concurrency` at a time. */
async function pool<T, R>(items: readonly T[], concurrency: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i] as T);
      }
    }),
  );
  return out;
}

/** `n` runs of a one-approval workflow, waiting at it (the local stack's workers take them there); their approval ids. */
async function pendingApprovals(d: BenchData, n: number): Promise<string[]> {
  const a = d.team;
  const workflow = await createWorkflow(
    { accountId: a.account.accountId, userId: a.admin.userId, role: 'admin' },
    { name: 'approval load', definition: approvalFlow(), recovery: false, editors: [] },
  );
  const runs = await pool(Array.from({ length: n }), 16, async () => {
    const { execution } = await startRun({ workflow, trigger: 'api', variables: {}, startedBy: a.admin.userId });
    return execution.executionId;
  });
  await runsQueueDrained();
  const ids = await pool(runs, 16, async (executionId) => {
    const e = await getExecution(a.account.accountId, executionId);
    if (e?.status !== 'WAITING_APPROVAL' || !e.approvalId) throw new Error(`run ${executionId} is ${e?.status}, not waiting`);
    return e.approvalId;
  });
  return ids;
}

/** The workflow's latest 100 runs have all ended (a check that the drained queue means what it says). */
async function lastRunsEnded(accountId: string, workflowId: string) {
  const { items } = await listExecutions(accountId, { workflowId }, 100);
  return items.every((e) => e.status === 'SUCCEEDED' || e.status === 'FAILED');
}

export type LoadRow = {
  request: string;
  connections: number;
  requests: number;
  rps: number;
  p50ms: number;
  p99ms: number;
  maxMs: number;
  /** Socket errors and timeouts. */
  errors: number;
  /** Non-2xx answers other than the intended ones (none are intended here: the plan allows 1 M a minute). */
  non2xx: number;
  statusCodes: string;
  /** Triggers only: runs that reached their end per second, over the load and the drain that followed. */
  runsPerSecond?: number;
  /** Triggers only: seconds from the end of the load until every run had ended (the backlog). */
  backlogSeconds?: number;
};

/**
 * Throughput and latency of the local stack (HTTP server, route handlers, queue pollers and workers
 * in this process, on the emulators), with autocannon at each concurrency: a webhook trigger for
 * `seconds`, the approval POST once for each of a supply of pending approvals, a v1 read for
 * `seconds`. Before each run the runs queue is drained, so a run starts with idle workers.
 */
export async function measureLoadInProcess(
  d: BenchData,
  opts: { seconds?: number; connections?: number[]; approvals?: Record<number, number>; dispatchTriggers?: number } = {},
) {
  const { seconds = 5, connections = [1, 10, 50], approvals = { 1: 300, 10: 600, 50: 900 }, dispatchTriggers = 200 } = opts;
  // Fresh queues: the earlier benchmarks took run messages off theirs by hand and left them in flight.
  await useOwnQueues();
  const stack = await startLocalStack({ host: '127.0.0.1', port: 0, emulators: 'reuse' });
  try {
    const rows: LoadRow[] = [];
    const row = (request: string, c: number, r: LoadResult): LoadRow => ({
      request,
      connections: c,
      requests: r.requests,
      rps: r.rps,
      p50ms: r.p50,
      p99ms: r.p99,
      maxMs: r.max,
      errors: r.errors + r.timeouts,
      non2xx: r.non2xx,
      statusCodes: Object.entries(r.statusCodes)
        .map(([k, v]) => `${k}×${v}`)
        .join(' '),
    });
    const json = { 'content-type': 'application/json' };
    const hook = d.teamHook;
    const admin = { authorization: `Bearer ${d.team.adminKey.token}` };

    // Warm the server's route modules and the record caches before measuring anything.
    await runsQueueDrained();
    const trigger: Omit<LoadSpec, 'connections'> = {
      url: stack.url,
      method: 'POST',
      path: `/api/webhooks/${hook.webhook.webhookId}/trigger`,
      headers: { ...json, authorization: `Bearer ${hook.key.token}` },
      body: JSON.stringify({ n: 1 }),
    };
    await runLoad({ ...trigger, connections: 1, seconds: 1 });
    // The trigger alone, its runs sent to queues no worker reads: what a trigger costs when it does not
    // share the process and the two cores with the runs it starts (as on AWS, where they never do).
    const polled = {
      RUNS_QUEUE_URL: config().RUNS_QUEUE_URL as string,
      HEAVY_RUNS_QUEUE_URL: config().HEAVY_RUNS_QUEUE_URL as string,
      NOTIFY_QUEUE_URL: config().NOTIFY_QUEUE_URL as string,
    };
    await useOwnQueues();
    rows.push(row('trigger, its runs not executed', 1, await runLoad({ ...trigger, connections: 1, seconds })));
    Object.assign(process.env, polled);
    resetConfig();
    for (const c of connections) {
      await runsQueueDrained();
      const r = await runLoad({ ...trigger, connections: c, seconds });
      const loadEnded = Date.now();
      // One-step runs: the queue is empty with nothing in flight once every run has ended.
      await runsQueueDrained();
      const backlogSeconds = (Date.now() - loadEnded) / 1000;
      const ended = await lastRunsEnded(hook.webhook.accountId, hook.workflow.workflowId);
      if (!ended) throw new Error('the runs queue drained with runs not ended');
      const completed = r.statusCodes['200'] ?? 0;
      rows.push({
        ...row('trigger', c, r),
        runsPerSecond: Math.round(completed / (r.seconds + backlogSeconds)),
        backlogSeconds: Math.round(backlogSeconds * 10) / 10,
      });
    }

    const supply = await pendingApprovals(
      d,
      connections.reduce((n, c) => n + (approvals[c] ?? 300), 0),
    );
    for (const c of connections) {
      const bodies = supply.splice(0, approvals[c] ?? 300).map((approvalId) => JSON.stringify({ approvalId, decision: 'approve' }));
      await runsQueueDrained();
      rows.push(
        row(
          'approval POST',
          c,
          await runLoad({
            url: stack.url,
            method: 'POST',
            path: '/api/webhook-trigger/approval',
            headers: { ...json, ...admin },
            connections: c,
            bodies,
          }),
        ),
      );
    }

    const executionId = (await startRun({ workflow: hook.workflow, trigger: 'api', variables: {}, startedBy: d.team.admin.userId }))
      .execution.executionId;
    await runsQueueDrained();
    const read: Omit<LoadSpec, 'connections'> = {
      url: stack.url,
      method: 'GET',
      path: `/api/v1/executions/${executionId}`,
      headers: admin,
    };
    await runLoad({ ...read, connections: 1, seconds: 1 });
    for (const c of connections) rows.push(row('v1 read', c, await runLoad({ ...read, connections: c, seconds })));

    await runsQueueDrained();
    const dispatch = [
      { pace: `${dispatchTriggers} triggers, 20 ms apart`, ...(await measureDispatch(d, stack.url, dispatchTriggers, 20)) },
      { pace: '20 triggers, 1.5 s apart', ...(await measureDispatch(d, stack.url, 20, 1_500)) },
    ];
    return { rows, dispatch };
  } finally {
    await stack.stop();
  }
}

const percentile = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)] as number;
};

/**
 * Dispatch latency on the local stack: triggers one at a time, `gapMs` apart, each timed from the 200
 * the client received to the worker's claim. The claim's time is the run's `step.started` event: the
 * worker takes it right after its claim (a conditional UpdateItem) returned, in the same turn. Also
 * from the trigger's own clock (`execution.started`, taken when the request arrived) to the claim.
 * The rate matters: the poller's receive (like Lambda's batching window) returns when it has 10
 * messages or its 1 s wait is over, so close triggers fill batches and isolated ones wait.
 */
export async function measureDispatch(d: BenchData, url: string, n: number, gapMs: number) {
  const hook = d.teamHook;
  const sent: { executionId: string; answered: number }[] = [];
  for (let i = 0; i < n; i++) {
    const res = await fetch(`${url}/api/webhooks/${hook.webhook.webhookId}/trigger`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${hook.key.token}` },
      body: JSON.stringify({ n: i }),
    });
    const answered = Date.now();
    const body = (await res.json()) as { executionId: string };
    if (res.status !== 200) throw new Error(`trigger answered ${res.status}: ${JSON.stringify(body)}`);
    sent.push({ executionId: body.executionId, answered });
    await sleep(gapMs);
  }
  await runsQueueDrained();
  const accountId = hook.webhook.accountId;
  const measured = await pool(sent, 8, async ({ executionId, answered }) => {
    const { items } = await listEvents(accountId, executionId, 10);
    const started = items.find((e) => e.type === 'execution.started')?.at;
    const claimed = items.find((e) => e.type === 'step.started')?.at;
    if (started === undefined || claimed === undefined) throw new Error(`run ${executionId} was not claimed`);
    return { fromResponse: claimed - answered, fromRequest: claimed - started };
  });
  const fromResponse = measured.map((m) => m.fromResponse);
  return {
    triggers: n,
    gapMs,
    p50: percentile(fromResponse, 50),
    p99: percentile(fromResponse, 99),
    max: Math.max(...fromResponse),
    p50FromRequest: percentile(
      measured.map((m) => m.fromRequest),
      50,
    ),
  };
}
