import { randomBytes } from 'node:crypto';
import { CreateQueueCommand, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { CreateTableCommand } from '@aws-sdk/client-dynamodb';
import { db, queue } from '../../shared/clients.ts';
import { createTableInput } from '../../shared/db/table.ts';
import { config, resetConfig } from '../../shared/config.ts';
import { startPoller } from '../../infra/local/poller.ts';
import { workerFunction } from '../../infra/local/lambda.ts';
import { WORKER_TIMEOUT_SECONDS } from '../../shared/db/table.ts';
import { handler as runWorker } from '../../functions/worker/execute.ts';
import { handler as notifyWorker } from '../../functions/worker/notify.ts';
import { getApproval } from '../../shared/db/entities/approval.ts';
import { type Decision, decisionMessage, decisionTransition, writeDecision } from '../../shared/engine/decisions.ts';
import { type Lane, RunMessage, runsQueueUrl } from '../../shared/engine/dispatch.ts';

/**
 * Give this test file its own runs queues (both lanes) and notifications queue (test files run in
 * parallel and would otherwise take each other's messages). Call in beforeAll, before anything sends.
 */
export async function useOwnQueues(env: Record<string, string> = {}) {
  const tag = randomBytes(4).toString('hex');
  const make = async (name: string) => {
    const { QueueUrl } = await queue().send(
      new CreateQueueCommand({ QueueName: `${name}-${tag}`, Attributes: { VisibilityTimeout: '30' } }),
    );
    return QueueUrl as string;
  };
  Object.assign(process.env, {
    RUNS_QUEUE_URL: await make('runs'),
    HEAVY_RUNS_QUEUE_URL: await make('heavy-runs'),
    NOTIFY_QUEUE_URL: await make('notify'),
    // Lambda's on-failure destination of the local stack's asynchronous invocations (infra/local/async-invoke.ts).
    ASYNC_FAILURES_QUEUE_URL: await make('async-failures'),
    ...env,
  });
  resetConfig();
}

/**
 * Give this test file a table of its own, for tests of what reads the whole table (the sweeps) and
 * must neither see nor touch the runs of files running beside it. Call in beforeAll, first.
 * `stream`: with the CDK table's stream (the audit stream's tests); without, by default, as the shared table.
 */
export async function useOwnTable({ stream = false }: { stream?: boolean } = {}) {
  const name = `flowgate-${randomBytes(4).toString('hex')}`;
  await db().send(new CreateTableCommand(createTableInput(name, { stream })));
  process.env.TABLE_NAME = name;
  resetConfig();
}

/** The real workers on this file's queues (the runs worker on both lanes), as the local stack runs them. */
export function startWorkers() {
  const { RUNS_QUEUE_URL, HEAVY_RUNS_QUEUE_URL, NOTIFY_QUEUE_URL } = config();
  const pollers = [
    startPoller(RUNS_QUEUE_URL as string, runWorker, { fn: workerFunction('worker/execute', WORKER_TIMEOUT_SECONDS) }),
    ...(HEAVY_RUNS_QUEUE_URL
      ? [startPoller(HEAVY_RUNS_QUEUE_URL, runWorker, { fn: workerFunction('worker/execute', WORKER_TIMEOUT_SECONDS) })]
      : []),
    startPoller(NOTIFY_QUEUE_URL as string, notifyWorker, { fn: workerFunction('worker/notify', WORKER_TIMEOUT_SECONDS) }),
  ];
  return () => Promise.all(pollers.map((p) => p.stop()));
}

/** Take the pending run messages off this file's runs queue (or the heavy lane's, with `lane`) without processing them. */
export async function takeRunMessages(max = 10, lane?: Lane): Promise<RunMessage[]> {
  const { Messages = [] } = await queue().send(
    new ReceiveMessageCommand({ QueueUrl: runsQueueUrl(lane), MaxNumberOfMessages: max, WaitTimeSeconds: 1, VisibilityTimeout: 300 }),
  );
  return Messages.map((m) => RunMessage.parse(JSON.parse(m.Body ?? '')));
}

/** Poll `read` until `done` holds (or fail after `timeoutMs`). */
export async function eventually<T>(read: () => Promise<T>, done: (v: T) => boolean, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await read();
    if (done(v)) return v;
    if (Date.now() > deadline)
      throw new Error(`condition not reached in ${timeoutMs} ms; last value: ${JSON.stringify(v)?.slice(0, 2000)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Tests: move the run waiting for an approval on a decision, without recording the decision on the
 * approval (the approvals endpoints do both in one transaction), through the engine's own decision
 * write (`writeDecision`, with none of the approval's items): RUNNING when the run took it (its worker
 * applies it next), `undefined` when it was not waiting for this approval.
 */
export async function resumeAfterDecision(accountId: string, executionId: string, approvalId: string, d: Decision, now = Date.now()) {
  const approval = await getApproval(accountId, approvalId);
  if (approval?.executionId !== executionId) return undefined;
  const t = decisionTransition(approval, d, { now });
  if ((await writeDecision([], t)) !== 'moved') return undefined;
  await decisionMessage(approval, t);
  return 'RUNNING' as const;
}
