import { AsyncLocalStorage } from 'node:async_hooks';
import { randomBytes } from 'node:crypto';
import type { MiddlewareStack } from '@smithy/types';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handler as approvalDeliveries } from '../../functions/http/v1/approvals/deliveries.ts';
import { handler as redeliverHandler } from '../../functions/http/deliveries/redeliver.ts';
import { handler as approveHandler } from '../../functions/http/v1/approvals/approve.ts';
import { db } from '../../shared/clients.ts';
import { resetConfig } from '../../shared/config.ts';
import { NOTIFY_LOG_KEYS } from '../../shared/db/table.ts';
import { listApprovalMessages } from '../../shared/db/entities/approval-message.ts';
import { type Execution, getExecution } from '../../shared/db/entities/execution.ts';
import { createChannel } from '../../shared/domain/channels.ts';
import { createWorkflow } from '../../shared/domain/workflows.ts';
import { WorkflowDefinition } from '../../shared/engine/definition.ts';
import { startRun } from '../../shared/engine/runs.ts';
import { newId } from '../../shared/ids.ts';
import { startChatListener } from '../support/chat-listener.ts';
import { eventually, startWorkers, useOwnQueues } from '../support/engine.ts';
import { adminSession, givenAccount } from '../support/fixtures.ts';
import { apiEvent, bearer, invoke } from '../support/http.ts';
import { sessionOf } from '../support/sessions.ts';

// Issue 31, finding 4: every approval message is a delivery of its own (channel, target, kind), with
// its attempts and state; redelivering one sends only it.

let chat: Awaited<ReturnType<typeof startChatListener>>;
let stopWorkers: () => Promise<unknown>;
beforeAll(async () => {
  chat = await startChatListener();
  await useOwnQueues({ SLACK_API_URL: chat.slackApi, HTTP_STEP_ALLOWLIST: '127.0.0.1/32', DELIVERY_RETRY_SECONDS: '0.1' });
  stopWorkers = startWorkers();
});
afterAll(async () => {
  await stopWorkers?.();
  await chat.stop();
  resetConfig();
});

type Account = Awaited<ReturnType<typeof givenAccount>>;
const mails = async (approvalId: string) => {
  const store = (await (await fetch(`${process.env.AWS_ENDPOINT_URL_SESV2}/store`)).json()) as { emails: { body: { text: string } }[] };
  return store.emails.filter((m) => m.body.text.includes(approvalId));
};
const listDeliveries = async (a: Account, approvalId: string) =>
  (
    await invoke(
      approvalDeliveries,
      apiEvent({ path: `/api/v1/approvals/${approvalId}/deliveries`, params: { approvalId }, headers: bearer(a.adminKey.token) }),
    )
  ).json.items as any[];
const approve = async (a: Account, approvalId: string) => {
  const res = await invoke(
    approveHandler,
    apiEvent({
      method: 'POST',
      path: `/api/v1/approvals/${approvalId}/approve`,
      params: { approvalId },
      headers: bearer(a.adminKey.token),
      body: {},
    }),
  );
  expect(res.status).toBe(200);
};
const settled = (a: Account, approvalId: string, n: number, done = (d: any[]) => d.every((x) => x.state !== 'PENDING')) =>
  eventually(
    () => listDeliveries(a, approvalId),
    (d) => d.length === n && done(d),
    30_000,
  );

/** A run waiting at an approval that notifies a mail channel, a Slack conversation and a Teams webhook at `teamsPath`. */
async function givenWaitingRun(teamsPath: string) {
  const a = await givenAccount();
  const actor = adminSession(a);
  await createChannel(actor, { type: 'email', name: 'mail', from: 'approvals@example.com' });
  await createChannel(actor, {
    type: 'slack',
    name: 'ops',
    botToken: 'xoxb-1-deliveries',
    signingSecret: 's'.repeat(32),
    defaultChannel: '#deploys',
  });
  await createChannel(actor, { type: 'teams', name: 'chat', webhookUrl: `${chat.base}${teamsPath}` });
  const definition = WorkflowDefinition.parse({
    steps: [
      {
        id: 'gate',
        type: 'manual_approval',
        title: `Ship ${randomBytes(3).toString('hex')}?`,
        reviewers: ['role:admin'],
        notify: [{ channel: 'mail' }, { channel: 'ops' }, { channel: 'chat' }],
      },
    ],
  });
  const workflow = await createWorkflow(actor, { name: 'three channels', definition, recovery: false, editors: [] });
  const { execution } = await startRun({ workflow, trigger: 'api', variables: {}, startedBy: a.admin.userId });
  const waiting = await eventually(
    () => getExecution(a.account.accountId, execution.executionId) as Promise<Execution>,
    (e) => e?.status === 'WAITING_APPROVAL',
    30_000,
  );
  return { a, approvalId: waiting.approvalId as string, executionId: execution.executionId };
}

describe('approval messages in the delivery log', () => {
  it('a notice to three channels with one failing shows three deliveries; redelivering the failed one sends only it', async () => {
    const teams = `/teams/down-${randomBytes(4).toString('hex')}`;
    const { a, approvalId, executionId } = await givenWaitingRun(teams);
    const first = await settled(a, approvalId, 3);
    const by = Object.fromEntries(first.map((d) => [d.channel, d]));
    expect(first.map((d) => d.kind)).toEqual(['approval-request', 'approval-request', 'approval-request']);
    expect(first.every((d) => d.executionId === executionId && d.approvalId === approvalId)).toBe(true);
    expect(by.email).toMatchObject({ state: 'DELIVERED', target: `mail: ${a.admin.email}` });
    expect(by.slack).toMatchObject({ state: 'DELIVERED', target: 'ops: #deploys' });
    // The Teams flow answered 404: final, one attempt, the provider's answer kept; its URL is never shown.
    expect(by.teams).toMatchObject({ state: 'FAILED', target: 'chat: webhook' });
    expect(by.teams.attempts).toHaveLength(1);
    expect(by.teams.attempts[0].status).toBe(404);
    expect(JSON.stringify(first)).not.toContain(teams);
    expect(chat.calls(teams)).toHaveLength(1);

    // The flow is back; an admin redelivers the failed message alone.
    chat.healed.add(teams);
    const res = await invoke(
      redeliverHandler,
      apiEvent({
        method: 'POST',
        path: `/api/deliveries/${by.teams.deliveryId}/redeliver`,
        params: { deliveryId: by.teams.deliveryId },
        headers: bearer(await sessionOf(a.admin.email)),
      }),
    );
    expect(res.status).toBe(202);
    const after = await settled(a, approvalId, 3, (d) => d.every((x) => x.state === 'DELIVERED'));
    const again = Object.fromEntries(after.map((d) => [d.channel, d]));
    expect(again.teams.attempts.map((x: { status?: number }) => x.status)).toEqual([404, 202]);
    expect(again.email.attempts).toHaveLength(1);
    expect(again.slack.attempts).toHaveLength(1);
    expect(chat.calls(teams)).toHaveLength(2);
    expect(chat.calls('chat.postMessage').filter((c) => JSON.stringify(c.body).includes(approvalId))).toHaveLength(1);
    expect(await mails(approvalId)).toHaveLength(1);
    expect((await listApprovalMessages(a.account.accountId, approvalId)).map((m) => m.channelType).sort()).toEqual([
      'email',
      'slack',
      'teams',
    ]);

    // The decision brings each sent message up to date: one `approval-outcome` delivery per message.
    await approve(a, approvalId);
    const all = await settled(a, approvalId, 6);
    const outcomes = all.filter((d) => d.kind === 'approval-outcome');
    expect(outcomes.map((d) => [d.channel, d.state]).sort()).toEqual([
      ['email', 'DELIVERED'],
      ['slack', 'DELIVERED'],
      ['teams', 'DELIVERED'],
    ]);
    expect(chat.calls('chat.update').filter((c) => JSON.stringify(c.body).includes(approvalId))).toHaveLength(1);
  });

  it('a reminder of an approval decided before its turn is SKIPPED, not sent, and a redelivery does not send it either', async () => {
    const { a, approvalId } = await givenWaitingRun(`/teams/ok-${randomBytes(4).toString('hex')}`);
    await settled(a, approvalId, 3);
    await approve(a, approvalId);
    await settled(a, approvalId, 6);
    // A reminder planned before the decision, sent after it (its notice was late in the queue).
    const { processDelivery } = await import('../../shared/notifications/senders.ts');
    const [message] = await listApprovalMessages(a.account.accountId, approvalId);
    const job = {
      accountId: a.account.accountId,
      executionId: (await listDeliveries(a, approvalId))[0].executionId,
      approvalId,
      purpose: 'reminder',
      key: `r1#${message?.key}`,
      channelId: message?.channelId,
      channelName: 'x',
      channelType: message?.channelType,
      to: message?.to,
    };
    const posts = chat.received.length;
    expect(
      await processDelivery({
        kind: 'approval-reminder',
        deliveryId: `dl_${'0'.repeat(10)}${randomBytes(8).toString('hex')}`,
        payload: job,
      }),
    ).toEqual({});
    const reminder = (await listDeliveries(a, approvalId)).find((d) => d.kind === 'approval-reminder');
    expect(reminder).toMatchObject({ state: 'SKIPPED', nextRetryAt: null });
    expect(reminder.attempts[0].error).toBe('not sent: the approval was approved before its reminder');
    expect(chat.received.length).toBe(posts);
    // Redelivered, it looks again and skips again.
    const res = await invoke(
      redeliverHandler,
      apiEvent({
        method: 'POST',
        path: `/api/deliveries/${reminder.deliveryId}/redeliver`,
        params: { deliveryId: reminder.deliveryId },
        headers: bearer(await sessionOf(a.admin.email)),
      }),
    );
    expect(res.status).toBe(202);
    const again = await eventually(
      async () => (await listDeliveries(a, approvalId)).find((d) => d.kind === 'approval-reminder'),
      (d) => d.attempts.length === 2 && d.state !== 'PENDING',
      30_000,
    );
    expect(again.state).toBe('SKIPPED');
    expect(chat.received.length).toBe(posts);
    expect(await mails(approvalId)).toHaveLength(1);
  });

  it('a copy of a notice (the queue delivers at least once) plans the same deliveries and sends nothing twice', async () => {
    const { a, approvalId, executionId } = await givenWaitingRun(`/teams/ok-${randomBytes(4).toString('hex')}`);
    await settled(a, approvalId, 3);
    const { processNotice } = await import('../../shared/notifications/notices.ts');
    const notice = { kind: 'approval', action: 'remind', reminder: 1, accountId: a.account.accountId, executionId, approvalId };
    const noticeId = newId('dl');
    const posts = chat.received.length;
    expect(await processNotice(notice, noticeId)).toEqual([]);
    const sent = chat.received.length - posts;
    expect(sent).toBe(2); // the Slack conversation and the Teams chat; the mail goes to SES
    expect(await processNotice(notice, noticeId)).toEqual([]);
    expect(chat.received.length - posts).toBe(sent);
    const reminders = (await listDeliveries(a, approvalId)).filter((d) => d.kind === 'approval-reminder');
    expect(reminders.map((d) => [d.channel, d.state, d.attempts.length]).sort()).toEqual([
      ['email', 'DELIVERED', 1],
      ['slack', 'DELIVERED', 1],
      ['teams', 'DELIVERED', 1],
    ]);
    expect(await mails(approvalId)).toHaveLength(2);
  });

  it('the notifications worker writes only its own key families (what its IAM policy allows: NOTIFY_LOG_KEYS)', async () => {
    const { a, approvalId, executionId } = await givenWaitingRun(`/teams/ok-${randomBytes(4).toString('hex')}`);
    await settled(a, approvalId, 3);
    const writes: string[] = [];
    const recording = new AsyncLocalStorage<string[]>();
    const stack = db().middlewareStack as MiddlewareStack<any, any>;
    const name = `record-writes-${randomBytes(4).toString('hex')}`;
    stack.add(
      (next, context) => async (args) => {
        const into = recording.getStore();
        const input = args.input as any;
        if (into && /Put|Update|Delete|TransactWrite|BatchWrite/.test(String(context.commandName)))
          for (const item of input.TransactItems ?? [input])
            for (const op of [item, item.Put, item.Update, item.Delete, item.ConditionCheck])
              if (op?.Item?.PK ?? op?.Key?.PK) into.push(String(op.Item?.PK ?? op.Key.PK));
        return next(args);
      },
      { step: 'initialize', name },
    );
    const { processNotice } = await import('../../shared/notifications/notices.ts');
    const base = { kind: 'approval', accountId: a.account.accountId, executionId, approvalId };
    try {
      await recording.run(writes, async () => {
        expect(await processNotice({ ...base, action: 'remind', reminder: 1 }, newId('dl'))).toEqual([]);
      });
      await approve(a, approvalId);
      await recording.run(writes, () => processNotice({ ...base, action: 'update' }, newId('dl')));
    } finally {
      stack.remove(name);
    }
    // The reminders' deliveries and their messages were written, and nothing else.
    expect(writes.some((pk) => pk.startsWith('DLV#'))).toBe(true);
    expect(writes.some((pk) => pk.startsWith('APMSG#'))).toBe(true);
    expect(writes.filter((pk) => !NOTIFY_LOG_KEYS.some((k) => pk.startsWith(k)))).toEqual([]);
  });
});
