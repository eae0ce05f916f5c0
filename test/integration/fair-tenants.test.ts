import { randomBytes } from 'node:crypto';
import type { SendMessageBatchCommandInput, SendMessageCommandInput } from '@aws-sdk/client-sqs';
import type { SQSEvent } from 'aws-lambda';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { handler as redeliverHandler } from '../../functions/http/deliveries/redeliver.ts';
import { handler as approveHandler } from '../../functions/http/v1/approvals/approve.ts';
import { handler as approvalDeliveries } from '../../functions/http/v1/approvals/deliveries.ts';
import { handler as runWorker } from '../../functions/worker/execute.ts';
import { handler as notifyWorker } from '../../functions/worker/notify.ts';
import { workerFunction } from '../../infra/local/lambda.ts';
import { startPoller } from '../../infra/local/poller.ts';
import { queue } from '../../shared/clients.ts';
import { config, resetConfig } from '../../shared/config.ts';
import { type Execution, getExecution } from '../../shared/db/entities/execution.ts';
import { WORKER_TIMEOUT_SECONDS } from '../../shared/db/table.ts';
import { createChannel } from '../../shared/domain/channels.ts';
import { createWorkflow } from '../../shared/domain/workflows.ts';
import { WorkflowDefinition } from '../../shared/engine/definition.ts';
import { startRun } from '../../shared/engine/runs.ts';
import { startChatListener } from '../support/chat-listener.ts';
import { eventually, useOwnQueues } from '../support/engine.ts';
import { adminSession, givenAccount } from '../support/fixtures.ts';
import { apiEvent, bearer, invoke } from '../support/http.ts';
import { sessionOf } from '../support/sessions.ts';

// Fair tenants (docs/architecture.md "Fair tenants"): every message the service sends to the runs and
// notifications queues carries its account as MessageGroupId, which makes the standard queues SQS
// fair queues with the account as tenant. Checked on the way in (every SendMessage and
// SendMessageBatch the SDK sends) and on the way out (every record the workers get from the local
// queue), along every path that sends: a run's start, its delay and its approval decision; event
// notifications and approval notices (one batch); an approval message's next attempt (the notify
// worker's); an admin's redelivery.

type Sent = { queue: 'runs' | 'notify'; command: string; group?: string; body: any };
const sent: Sent[] = [];
const received: { queue: 'runs' | 'notify'; group?: string; body: any }[] = [];
const MIDDLEWARE = 'test-record-fair-sends';
/** The account a message is about: a run message's, an event notice's, or its payload's (approval notices and messages, redeliveries). */
const accountOf = (body: any): string | undefined => body?.accountId ?? body?.payload?.accountId;

let chat: Awaited<ReturnType<typeof startChatListener>>;
let stop: () => Promise<unknown>;
beforeAll(async () => {
  chat = await startChatListener();
  await useOwnQueues({ SLACK_API_URL: chat.slackApi, HTTP_STEP_ALLOWLIST: '127.0.0.1/32', DELIVERY_RETRY_SECONDS: '0.1' });
  const { RUNS_QUEUE_URL, NOTIFY_QUEUE_URL } = config();
  const which = (url: unknown) => (url === RUNS_QUEUE_URL ? 'runs' : url === NOTIFY_QUEUE_URL ? 'notify' : undefined);
  queue().middlewareStack.add(
    (next, context) => async (args) => {
      const name = context.commandName ?? '';
      if (name === 'SendMessageCommand' || name === 'SendMessageBatchCommand') {
        const input = args.input as SendMessageCommandInput & SendMessageBatchCommandInput;
        const q = which(input.QueueUrl);
        if (q) {
          const entries = name === 'SendMessageCommand' ? [input] : (input.Entries ?? []);
          for (const e of entries) sent.push({ queue: q, command: name, group: e.MessageGroupId, body: JSON.parse(e.MessageBody ?? '') });
        }
      }
      return next(args);
    },
    { step: 'initialize', name: MIDDLEWARE },
  );
  // The real workers on this file's queues, each batch's records noted as the local queue hands them over.
  const noting = (q: 'runs' | 'notify', worker: (e: SQSEvent, c: any) => Promise<any>) => (event: SQSEvent, context: any) => {
    for (const r of event.Records) received.push({ queue: q, group: r.attributes.MessageGroupId, body: JSON.parse(r.body) });
    return worker(event, context);
  };
  const pollers = [
    startPoller(RUNS_QUEUE_URL, noting('runs', runWorker), { fn: workerFunction('worker/execute', WORKER_TIMEOUT_SECONDS) }),
    startPoller(NOTIFY_QUEUE_URL, noting('notify', notifyWorker), { fn: workerFunction('worker/notify', WORKER_TIMEOUT_SECONDS) }),
  ];
  stop = () => Promise.all(pollers.map((p) => p.stop()));
});
afterAll(async () => {
  queue().middlewareStack.remove(MIDDLEWARE);
  await stop?.();
  await chat?.stop();
  resetConfig();
});

type Account = Awaited<ReturnType<typeof givenAccount>>;
const deliveriesOf = async (a: Account, approvalId: string) =>
  (
    await invoke(
      approvalDeliveries,
      apiEvent({ path: `/api/v1/approvals/${approvalId}/deliveries`, params: { approvalId }, headers: bearer(a.adminKey.token) }),
    )
  ).json.items as any[];

/** One account's run through every sending path; returns the account id. */
async function runThrough(a: Account) {
  const actor = adminSession(a);
  // A Teams flow that fails once (503): the approval message's second attempt is queued by the notify worker.
  await createChannel(actor, { type: 'teams', name: 'chat', webhookUrl: `${chat.base}/teams/flaky-${randomBytes(4).toString('hex')}` });
  const definition = WorkflowDefinition.parse({
    steps: [
      { id: 'pause', type: 'delay', seconds: 1 },
      { id: 'gate', type: 'manual_approval', title: 'Fair?', reviewers: ['role:admin'], notify: [{ channel: 'chat' }] },
      { id: 'done', type: 'set', values: { ok: true } },
    ],
    notifications: [
      {
        url: `${chat.base}/teams/events-${randomBytes(4).toString('hex')}`,
        events: ['execution.started', 'execution.succeeded'],
        secret: `whsec_${randomBytes(32).toString('base64')}`,
      },
    ],
  });
  const workflow = await createWorkflow(actor, { name: 'fair', definition, recovery: false, editors: [] });
  const { execution } = await startRun({ workflow, trigger: 'api', variables: {}, startedBy: a.admin.userId });
  const read = () => getExecution(a.account.accountId, execution.executionId) as Promise<Execution>;
  const { approvalId } = await eventually(read, (e) => e?.status === 'WAITING_APPROVAL', 30_000);
  const [message] = await eventually(
    () => deliveriesOf(a, approvalId as string),
    (d) => d.length === 1 && d[0].state === 'DELIVERED',
    30_000,
  );
  expect(message.attempts.length).toBe(2);
  const approved = await invoke(
    approveHandler,
    apiEvent({
      method: 'POST',
      path: `/api/v1/approvals/${approvalId}/approve`,
      params: { approvalId: approvalId as string },
      headers: bearer(a.adminKey.token),
      body: {},
    }),
  );
  expect(approved.status).toBe(200);
  await eventually(read, (e) => e?.status === 'SUCCEEDED', 30_000);
  const redelivered = await invoke(
    redeliverHandler,
    apiEvent({
      method: 'POST',
      path: `/api/deliveries/${message.deliveryId}/redeliver`,
      params: { deliveryId: message.deliveryId },
      headers: bearer(await sessionOf(a.admin.email)),
    }),
  );
  expect(redelivered.status).toBe(202);
  await eventually(
    () => deliveriesOf(a, approvalId as string),
    (d) => d.every((x) => x.state === 'DELIVERED') && d.find((x) => x.deliveryId === message.deliveryId)?.attempts.length === 3,
    30_000,
  );
  return a.account.accountId;
}

it('every message sent to the runs and notifications queues carries its account as MessageGroupId, and comes out of the local queue with it', {
  timeout: 120_000,
}, async () => {
  const accounts = await Promise.all([givenAccount(), givenAccount()]);
  const ids = await Promise.all(accounts.map(runThrough));
  // Every queued message is taken (the redelivery's last).
  await eventually(
    async () => received.length,
    (n) => n >= sent.length,
    30_000,
  );

  // Every path sent: run messages (start, wake after the delay, decision), notification batches, the notify worker's next attempt, the redelivery.
  const paths = new Set(
    sent.map(
      (s) =>
        `${s.queue} ${s.command}${s.queue === 'notify' && s.command === 'SendMessageCommand' ? (s.body.redelivery ? ' redelivery' : ' later') : ''}`,
    ),
  );
  expect([...paths].sort()).toEqual([
    'notify SendMessageBatchCommand',
    'notify SendMessageCommand later',
    'notify SendMessageCommand redelivery',
    'runs SendMessageCommand',
  ]);
  for (const id of ids) {
    // At least three run messages each: the start, the wake after the delay, the decision.
    expect(sent.filter((s) => s.queue === 'runs' && s.body.accountId === id).length).toBeGreaterThanOrEqual(3);
  }
  // In: each with its own account's group (two accounts: two groups).
  expect(sent.map((s) => s.group)).toEqual(sent.map((s) => accountOf(s.body)));
  expect(new Set(sent.map((s) => s.group))).toEqual(new Set(ids));
  // Out: the local queue kept it on each.
  expect(received.length).toBeGreaterThanOrEqual(sent.length);
  expect(received.map((r) => r.group)).toEqual(received.map((r) => accountOf(r.body)));
  expect(new Set(received.map((r) => r.group))).toEqual(new Set(ids));
});
