import { createServer, type Server } from 'node:http';
import type { Context, SQSEvent } from 'aws-lambda';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { handler as runWorker } from '../../functions/worker/execute.ts';
import { startPoller } from '../../infra/local/poller.ts';
import { workerFunction } from '../../infra/local/lambda.ts';
import { config } from '../../shared/config.ts';
import { type Execution, getExecution } from '../../shared/db/entities/execution.ts';
import { WORKER_TIMEOUT_SECONDS } from '../../shared/db/table.ts';
import { WorkflowDefinition } from '../../shared/engine/definition.ts';
import { startRun } from '../../shared/engine/runs.ts';
import { createWorkflow } from '../../shared/domain/workflows.ts';
import { eventually, useOwnQueues } from '../support/engine.ts';
import { givenAccount } from '../support/fixtures.ts';

// A fault test of its own (about 35 s): one run whose http_request takes its whole maximal timeout
// (30 s) shares an SQS batch with nine quick runs. The worker's time limit leaves room for the longest
// step, so the invocation ends in time and no run of the batch is lost with it.

let target: Server;
let url: string;
beforeAll(async () => {
  await useOwnQueues({ HTTP_STEP_ALLOWLIST: '127.0.0.1/32' });
  // Accepts the request and never answers.
  target = createServer(() => undefined);
  await new Promise<void>((r) => target.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(target.address() as { port: number }).port}/slow`;
});
afterAll(() => {
  target.closeAllConnections();
  target.close();
});

it('one maximal http_request and nine quick runs in one batch: all ten finish, the invocation within its time', {
  timeout: 120_000,
}, async () => {
  const { account, admin } = await givenAccount();
  const actor = { accountId: account.accountId, userId: admin.userId, role: 'admin' as const };
  const workflow = async (steps: unknown[]) =>
    createWorkflow(actor, { name: 'w', definition: WorkflowDefinition.parse({ steps }), recovery: false, editors: [] });
  const slow = await workflow([{ id: 'call', type: 'http_request', method: 'GET', url, timeoutMs: 30_000 }]);
  const quick = await workflow([{ id: 'set', type: 'set', values: { done: true } }]);
  const runs: Execution[] = [];
  runs.push((await startRun({ workflow: slow, trigger: 'api', variables: {} })).execution);
  for (let i = 0; i < 9; i++) runs.push((await startRun({ workflow: quick, trigger: 'api', variables: {} })).execution);

  // The local event source, as on AWS: batches of up to 10, each invocation given the worker's timeout
  // and abandoned when it is up. The ten messages are waiting, so they come as one batch.
  const invocations: { records: number; leftMs: number }[] = [];
  const worker = async (event: SQSEvent, context: Context) => {
    const result = await runWorker(event, context);
    invocations.push({ records: event.Records.length, leftMs: context.getRemainingTimeInMillis() });
    return result;
  };
  const poller = startPoller(config().RUNS_QUEUE_URL as string, worker, { fn: workerFunction('worker/execute', WORKER_TIMEOUT_SECONDS) });
  try {
    const read = () => Promise.all(runs.map((e) => getExecution(e.accountId, e.executionId)));
    const done = await eventually(read, (all) => all.every((e) => e?.status === 'SUCCEEDED' || e?.status === 'FAILED'), 90_000);
    expect(done.slice(1).map((e) => e?.status)).toEqual(Array(9).fill('SUCCEEDED'));
    // The slow run ends by its own step timeout, FAILED, not INTERRUPTED by a dead invocation.
    expect(done[0]).toMatchObject({ status: 'FAILED', error: { code: 'TIMEOUT' } });
  } finally {
    await poller.stop();
  }
  expect(invocations[0]?.records).toBe(10);
  // The batch's invocation returned before its time was up (so Lambda would not have killed it).
  expect(invocations[0]?.leftMs).toBeGreaterThan(0);
  expect(WORKER_TIMEOUT_SECONDS * 1000).toBeGreaterThan(30_000 + 2_000 + 5_000);
});
