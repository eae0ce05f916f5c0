// `npm run bench -- fairness`: fair tenants on the local stack (docs/performance.md "Fair tenants").
// Account A starts 500 runs whose http_request waits 2 s (a slow server on 127.0.0.1); account B starts
// 50 one-step runs while A's backlog is in the runs queue. B's time from trigger to finish, alone and
// under A's load: with the account as the runs queue's message group (an SQS fair queue), B's messages
// go before A's backlog, so B's p99 under load stays within 2× of B alone.
import { createServer } from 'node:http';
import { startLocalStack } from '../../infra/local/stack.ts';
import { type Execution, getExecution } from '../../shared/db/entities/execution.ts';
import { createKey } from '../../shared/domain/keys.ts';
import { createWebhook } from '../../shared/domain/webhooks.ts';
import { createWorkflow } from '../../shared/domain/workflows.ts';
import { WorkflowDefinition } from '../../shared/engine/definition.ts';
import { CreateWebhookBody } from '../../shared/schemas/webhooks.ts';
import { useOwnQueues } from '../support/engine.ts';
import { givenAccount } from '../support/fixtures.ts';
import { setFlow } from './flows.ts';

export const FAIRNESS = { noisyRuns: 500, noisyWaitMs: 2_000, quietRuns: 50, clientConnections: 50, gate: 2 };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;

/** An account with a webhook that starts `definition`, and its trigger key. */
async function tenant(definition: WorkflowDefinition) {
  const a = await givenAccount({ plan: 'team' });
  const owner = { kind: 'session', accountId: a.account.accountId, userId: a.admin.userId, role: 'admin', sessionId: '' } as const;
  const key = await createKey(owner, { name: 'trigger', scopes: ['WEBHOOK_TRIGGER'], validityDays: 30 });
  const workflow = await createWorkflow(owner, { name: 'fairness', definition, recovery: false, editors: [] });
  const webhook = await createWebhook(
    owner,
    CreateWebhookBody.parse({ workflowId: workflow.workflowId, name: 'fairness', apiKeyId: key.id }),
  );
  return { accountId: a.account.accountId, path: `/api/webhooks/${webhook.webhookId}/trigger`, token: key.token };
}
type Tenant = Awaited<ReturnType<typeof tenant>>;

/** Trigger `n` runs of `t`, `connections` requests at a time; each run's id and when its trigger was sent. */
async function trigger(base: string, t: Tenant, n: number, connections: number) {
  const started: { executionId: string; sentAt: number }[] = [];
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
        if (res.status !== 202 || !body.executionId) throw new Error(`trigger answered ${res.status}: ${JSON.stringify(body)}`);
        started.push({ executionId: body.executionId, sentAt });
      }
    }),
  );
  return started;
}

/** Wait until every run has ended; the ms from each trigger's send to its run's end. */
async function finished(t: Tenant, runs: { executionId: string; sentAt: number }[], timeoutMs = 300_000) {
  const deadline = Date.now() + timeoutMs;
  const ended = new Map<string, Execution>();
  while (ended.size < runs.length) {
    if (Date.now() > deadline) throw new Error(`${runs.length - ended.size} runs of ${t.accountId} did not end in ${timeoutMs} ms`);
    for (const r of runs) {
      if (ended.has(r.executionId)) continue;
      const e = await getExecution(t.accountId, r.executionId);
      if (e?.finishedAt !== undefined) {
        if (e.status !== 'SUCCEEDED') throw new Error(`run ${r.executionId} ended ${e.status}`);
        ended.set(r.executionId, e);
      }
    }
    if (ended.size < runs.length) await sleep(250);
  }
  return runs.map((r) => (ended.get(r.executionId)?.finishedAt as number) - r.sentAt).sort((x, y) => x - y);
}

const row = (scenario: string, ms: number[]) => ({
  scenario,
  runs: ms.length,
  p50ms: percentile(ms, 50),
  p99ms: percentile(ms, 99),
  maxMs: ms.at(-1) ?? NaN,
});

export async function fairnessPart() {
  const slow = createServer((_req, res) => {
    setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'), FAIRNESS.noisyWaitMs);
  });
  await new Promise<void>((r) => slow.listen(0, '127.0.0.1', r));
  const slowUrl = `http://127.0.0.1:${(slow.address() as { port: number }).port}/slow`;
  // Fresh queues; the runs' http_request may call the slow server on 127.0.0.1 (docs/local-mode.md).
  await useOwnQueues({ HTTP_STEP_ALLOWLIST: '127.0.0.1/32' });
  const stack = await startLocalStack({ host: '127.0.0.1', port: 0, emulators: 'reuse' });
  try {
    const noisy = await tenant(
      WorkflowDefinition.parse({ steps: [{ id: 'call', type: 'http_request', method: 'GET', url: slowUrl, timeoutMs: 10_000 }] }),
    );
    const quiet = await tenant(setFlow(1));
    const c = FAIRNESS.clientConnections;
    // A warm-up of both (caches, the slow server's connections), then B alone.
    await finished(quiet, await trigger(stack.url, quiet, 20, 10));
    await finished(noisy, await trigger(stack.url, noisy, 20, 10));
    const alone = await finished(quiet, await trigger(stack.url, quiet, FAIRNESS.quietRuns, c));
    // A's 500 go in; once A has a backlog waiting (a second in), B's 50.
    const loadStart = Date.now();
    const noisyRuns = trigger(stack.url, noisy, FAIRNESS.noisyRuns, c);
    await sleep(1_000);
    const quietRuns = await trigger(stack.url, quiet, FAIRNESS.quietRuns, c);
    const underLoad = await finished(quiet, quietRuns);
    const quietDoneAfter = Date.now() - loadStart;
    const noisyMs = await finished(noisy, await noisyRuns);
    const rows = [row('B alone', alone), row("B under A's load", underLoad), row('A (500 runs, 2 s each)', noisyMs)];
    const ratio = Math.round((percentile(underLoad, 99) / percentile(alone, 99)) * 100) / 100;
    const held = ratio <= FAIRNESS.gate;
    console.log(
      `\nFair tenants: B's ${FAIRNESS.quietRuns} one-step runs, trigger → finish (ms), alone and while A's ${FAIRNESS.noisyRuns} runs of a ${FAIRNESS.noisyWaitMs / 1000} s http_request are queued (B's all ended ${quietDoneAfter} ms after A began)`,
    );
    console.table(rows);
    console.log(`B's p99 under load / alone: ${ratio} (gate ≤ ${FAIRNESS.gate}): ${held ? 'holds' : 'FAILS'}`);
    return { rows, ratio, held, quietDoneAfterMs: quietDoneAfter };
  } finally {
    await stack.stop();
    slow.closeAllConnections();
    slow.close();
  }
}
