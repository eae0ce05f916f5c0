import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handler as v1ApproveHandler } from '../../functions/http/v1/approvals/approve.ts';
import { handler as v1GetHandler } from '../../functions/http/v1/approvals/get.ts';
import { handler as createWorkflowHandler } from '../../functions/http/workflows/create.ts';
import { handler as sweepHandler } from '../../functions/sweep/scheduled.ts';
import { resetConfig } from '../../shared/config.ts';
import { type Approval, getApproval } from '../../shared/db/entities/approval.ts';
import { listApprovalMessages } from '../../shared/db/entities/approval-message.ts';
import { listDueNudges } from '../../shared/db/entities/approval-nudge.ts';
import { listEvents } from '../../shared/db/entities/run-events.ts';
import { type Execution, getExecution } from '../../shared/db/entities/execution.ts';
import { createChannel } from '../../shared/domain/channels.ts';
import { nudgeDueApprovals } from '../../shared/domain/nudges.ts';
import { createWorkflow } from '../../shared/domain/workflows.ts';
import { cancelRun } from '../../shared/engine/cancel.ts';
import { WorkflowDefinition } from '../../shared/engine/definition.ts';
import { startRun } from '../../shared/engine/runs.ts';
import { startChatListener } from '../support/chat-listener.ts';
import { eventually, startWorkers, useOwnQueues, useOwnTable } from '../support/engine.ts';
import { adminSession, givenAccount } from '../support/fixtures.ts';
import { apiEvent, bearer, expectProblem, invoke } from '../support/http.ts';
import { sessionOf } from '../support/sessions.ts';
import { blockKitProblems } from '../support/slack-block-kit.ts';

// A manual_approval step's `remind` and `escalate` (docs/approvals-and-channels.md "Reminders and escalation"), driven by
// the scheduled sweep's clock: the sweep's domain function takes `now`. The sweep reads every due
// approval of the table, so this file has a table of its own.

let chat: Awaited<ReturnType<typeof startChatListener>>;
let stopWorkers: () => Promise<unknown>;
beforeAll(async () => {
  await useOwnTable();
  chat = await startChatListener();
  await useOwnQueues({ SLACK_API_URL: chat.slackApi });
  stopWorkers = startWorkers();
});
afterAll(async () => {
  await stopWorkers?.();
  await chat.stop();
  resetConfig();
});

type Mail = { destination: { to: string[] }; subject: string; body: { text: string } };
const mails = async (approvalId: string): Promise<Mail[]> => {
  const store = (await (await fetch(`${process.env.AWS_ENDPOINT_URL_SESV2}/store`)).json()) as { emails: Mail[] };
  return store.emails.filter((m) => m.body.text.includes(approvalId));
};
const TOKEN = 'xoxb-4242-reminders-test-token';

async function givenSetup(stepOf: (a: Awaited<ReturnType<typeof givenAccount>>) => Record<string, unknown>) {
  const a = await givenAccount();
  const step = stepOf(a);
  const actor = adminSession(a);
  const adminSlack = `U${randomBytes(4).toString('hex').toUpperCase()}`;
  chat.users.set(adminSlack, a.admin.email);
  await createChannel(actor, { type: 'email', name: 'mail', from: 'approvals@example.com' });
  await createChannel(actor, { type: 'slack', name: 'ops', botToken: TOKEN, signingSecret: randomBytes(16).toString('hex') });
  const title = `Deploy ${randomBytes(4).toString('hex')}?`;
  const definition = WorkflowDefinition.parse({
    steps: [
      { id: 'gate', type: 'manual_approval', title, notify: [{ channel: 'mail' }], ...step },
      { id: 'after', type: 'set', values: { done: true } },
    ],
  });
  const workflow = await createWorkflow(actor, { name: 'release', definition, recovery: false, editors: [] });
  const { execution } = await startRun({ workflow, trigger: 'api', variables: {}, startedBy: a.admin.userId });
  const e = await eventually(
    () => getExecution(execution.accountId, execution.executionId) as Promise<Execution>,
    (x) => x.status === 'WAITING_APPROVAL',
    30_000,
  );
  const approval = (await getApproval(e.accountId, e.approvalId as string)) as Approval;
  return { ...a, actor, adminSlack, title, workflow, e, approval };
}

const approvalOf = (x: Pick<Approval, 'accountId' | 'approvalId'>) => getApproval(x.accountId, x.approvalId) as Promise<Approval>;
const messages = (x: Pick<Approval, 'accountId' | 'approvalId'>) => listApprovalMessages(x.accountId, x.approvalId);
const eventsOf = async (e: Pick<Execution, 'accountId' | 'executionId'>) => (await listEvents(e.accountId, e.executionId, 500)).items;
const approve = (approvalId: string, token: string) =>
  invoke(
    v1ApproveHandler as never,
    apiEvent({ method: 'POST', path: `/api/v1/approvals/${approvalId}/approve`, headers: bearer(token), params: { approvalId }, body: {} }),
  );
const detail = (approvalId: string, token: string) =>
  invoke(v1GetHandler as never, apiEvent({ path: `/api/v1/approvals/${approvalId}`, headers: bearer(token), params: { approvalId } }));

describe('approval reminders and escalation', { timeout: 120_000 }, () => {
  it('reminds the reviewers who have not decided, once per interval under concurrent sweeps, at most `max` times', async () => {
    const s = await givenSetup((a) => ({
      reviewers: ['role:admin', `user:${a.member.userId}`],
      minApprovals: 2,
      remind: { everySeconds: 60, max: 2 },
    }));
    const { approval } = s;
    const t0 = approval.createdAt;
    await eventually(
      () => messages(approval),
      (m) => m.length === 2,
      30_000,
    );

    // Not yet due: nothing.
    await nudgeDueApprovals(t0 + 59_000);
    expect((await approvalOf(approval)).reminders).toBe(0);

    // The member approves; the first reminder goes to the admin alone, as a new message.
    expect((await approve(approval.approvalId, s.memberKey.token)).status).toBe(200);
    await Promise.all(Array.from({ length: 4 }, () => nudgeDueApprovals(t0 + 60_000)));
    expect(await approvalOf(approval)).toMatchObject({ reminders: 1, nextRemindAt: t0 + 120_000, status: 'PENDING' });
    const first = await eventually(
      async () => (await messages(approval)).filter((m) => m.key.startsWith('r1#')),
      (m) => m.length === 1,
      30_000,
    );
    expect(first[0]).toMatchObject({ userId: s.admin.userId, to: s.admin.email, channelType: 'email' });
    const reminderMails = (await mails(approval.approvalId)).filter((m) => m.subject.includes('Reminder'));
    expect(reminderMails.map((m) => [m.destination.to[0], m.subject])).toEqual([
      [s.admin.email, `Approval needed: Reminder 1 of 2: ${s.title}`],
    ]);

    // Within the interval: nothing more, however many sweeps.
    await Promise.all(Array.from({ length: 4 }, () => nudgeDueApprovals(t0 + 119_000)));
    expect((await approvalOf(approval)).reminders).toBe(1);

    // Concurrent sweeps at the second interval: one reminder.
    const results = await Promise.all(Array.from({ length: 5 }, () => nudgeDueApprovals(t0 + 125_000)));
    expect(results.reduce((n, r) => n + r.reminders, 0)).toBe(1);
    expect(await approvalOf(approval)).toMatchObject({ reminders: 2, nextRemindAt: t0 + 185_000 });

    // `max` reached: no more reminders, and the approval leaves the due list.
    await nudgeDueApprovals(t0 + 600_000);
    expect((await approvalOf(approval)).reminders).toBe(2);
    expect((await listDueNudges(t0 + 10_000_000, 100)).some((d) => d.approvalId === approval.approvalId)).toBe(false);
    await eventually(
      async () => (await messages(approval)).filter((m) => m.key.startsWith('r2#')),
      (m) => m.length === 1,
      30_000,
    );

    // Events: two approval.reminded, numbered beside the vote in write order, before what ends the wait.
    expect((await approve(approval.approvalId, s.adminKey.token)).status).toBe(200);
    await eventually(
      () => getExecution(s.e.accountId, s.e.executionId) as Promise<Execution>,
      (x) => x.status === 'SUCCEEDED',
      30_000,
    );
    const events = await eventsOf(s.e);
    const reminded = events.filter((e) => e.type === 'approval.reminded');
    expect(reminded.map((e) => e.data)).toEqual([
      { approvalId: approval.approvalId, stepId: 'gate', reminder: 1, max: 2 },
      { approvalId: approval.approvalId, stepId: 'gate', reminder: 2, max: 2 },
    ]);
    const seqs = events.map((e) => e.seq as number);
    expect(new Set(seqs).size).toBe(seqs.length);
    expect([...events].sort((x, y) => (x.seq as number) - (y.seq as number)).map((e) => e.type)).toEqual([
      'execution.started',
      'step.started',
      'approval.requested',
      'approval.decided',
      'approval.reminded',
      'approval.reminded',
      'approval.decided',
      'step.succeeded',
      'step.started',
      'step.succeeded',
      'execution.succeeded',
    ]);

    // The v1 detail: who was told, when, on which channel; the reminders' state.
    const view = await detail(approval.approvalId, s.adminKey.token);
    expect(view.status).toBe(200);
    const body = view.json as any;
    expect(body.reminders).toEqual({ everySeconds: 60, max: 2, sent: 2, nextAt: null });
    expect(body.escalation).toBeUndefined();
    expect(body.notifications.map((n: any) => [n.kind, n.reminder ?? null, n.channelType, n.userId])).toEqual(
      expect.arrayContaining([
        ['request', null, 'email', s.admin.userId],
        ['request', null, 'email', s.member.userId],
        ['reminder', 1, 'email', s.admin.userId],
        ['reminder', 2, 'email', s.admin.userId],
      ]),
    );
    expect(body.notifications).toHaveLength(4);
    expect(body.notifications[2]).toMatchObject({ to: s.admin.email, sentAt: expect.any(Number) });
    expect(body.notifications[2].sentAt).toBeGreaterThanOrEqual(body.notifications[0].sentAt);
  });

  it('escalation adds reviewers who are told and may decide; a decision stops the reminders', async () => {
    const s = await givenSetup((a) => ({
      reviewers: [`user:${a.member.userId}`],
      // No `notify` of its own: the escalation's messages alone (and still updated at the end).
      notify: undefined,
      remind: { everySeconds: 60, max: 5 },
      escalate: { afterSeconds: 120, reviewers: ['role:admin'], notify: [{ channel: 'ops', to: ['role:admin'] }] },
      timeoutSeconds: 3600,
    }));
    const { approval } = s;
    const t0 = approval.createdAt;
    // Not a reviewer before the escalation.
    expectProblem(await approve(approval.approvalId, s.adminKey.token), 403, 'NOT_A_REVIEWER');

    await nudgeDueApprovals(t0 + 60_000);
    expect(await approvalOf(approval)).toMatchObject({ reminders: 1, reviewers: [`user:${s.member.userId}`] });
    // The escalation and the second reminder are due together: both, once.
    await Promise.all(Array.from({ length: 3 }, () => nudgeDueApprovals(t0 + 121_000)));
    expect(await approvalOf(approval)).toMatchObject({
      reminders: 2,
      escalatedAt: t0 + 121_000,
      reviewers: [`user:${s.member.userId}`, 'role:admin'],
    });
    // The admin is told in Slack (found by email), with the escalation in the title.
    const dm = await eventually(
      async () => chat.calls('chat.postMessage').filter((c) => JSON.stringify(c.body).includes(approval.approvalId)),
      (c) => c.length === 1,
      30_000,
    );
    expect(dm[0]?.body.channel).toBe(s.adminSlack);
    expect(JSON.stringify(dm[0]?.body.blocks)).toContain(`Escalated: ${s.title}`);
    const escalated = (await eventsOf(s.e)).filter((e) => e.type === 'approval.escalated');
    expect(escalated.map((e) => e.data)).toEqual([
      {
        approvalId: approval.approvalId,
        stepId: 'gate',
        added: ['role:admin'],
        reviewers: [`user:${s.member.userId}`, 'role:admin'],
      },
    ]);

    // The v1 detail shows the escalation to the newly added reviewer.
    const body = (await detail(approval.approvalId, s.adminKey.token)).json as any;
    expect(body.escalation).toEqual({ at: t0 + 120_000, reviewers: ['role:admin'], escalatedAt: t0 + 121_000 });
    expect(body.reminders).toMatchObject({ sent: 2, nextAt: t0 + 181_000 });
    expect(body.notifications).toEqual([expect.objectContaining({ channelType: 'slack', userId: s.admin.userId, to: s.adminSlack })]);

    // The added reviewer decides; the run moves, and no reminder follows.
    expect((await approve(approval.approvalId, s.adminKey.token)).status).toBe(200);
    await eventually(
      () => getExecution(s.e.accountId, s.e.executionId) as Promise<Execution>,
      (x) => x.status === 'SUCCEEDED',
      30_000,
    );
    // The escalation's message is brought up to date: the outcome, no buttons.
    const updated = await eventually(
      async () => chat.calls('chat.update').filter((c) => JSON.stringify(c.body).includes(approval.approvalId)),
      (c) => c.length === 1,
      30_000,
    );
    expect(JSON.stringify(updated[0]?.body.blocks)).toContain(`Approved by ${s.admin.email}`);
    const swept = await sweepHandler();
    expect(swept).toMatchObject({ reminders: 0, escalations: 0 });
    await nudgeDueApprovals(t0 + 1_000_000);
    expect((await approvalOf(approval)).reminders).toBe(2);
    expect((await eventsOf(s.e)).filter((e) => e.type === 'approval.reminded')).toHaveLength(2);
    expect((await listDueNudges(t0 + 10_000_000, 100)).some((d) => d.approvalId === approval.approvalId)).toBe(false);
  });

  it("a cancelled run's approval is neither reminded nor escalated, and leaves the due list", async () => {
    const s = await givenSetup((a) => ({
      reviewers: [`user:${a.member.userId}`],
      remind: { everySeconds: 60, max: 3 },
      escalate: { afterSeconds: 60, reviewers: ['role:admin'] },
    }));
    const t0 = s.approval.createdAt;
    await cancelRun(s.e.accountId, s.e.executionId, 'not today');
    expect(await nudgeDueApprovals(t0 + 60_000)).toMatchObject({ reminders: 0, escalations: 0 });
    expect(await approvalOf(s.approval)).toMatchObject({ status: 'CANCELLED', reminders: 0, reviewers: [`user:${s.member.userId}`] });
    expect((await listDueNudges(t0 + 10_000_000, 100)).some((d) => d.approvalId === s.approval.approvalId)).toBe(false);
    const types = (await eventsOf(s.e)).map((e) => e.type);
    expect(types.filter((t) => t === 'approval.reminded' || t === 'approval.escalated')).toEqual([]);
  });

  it('remind and escalate are checked at save: bounds, the deadline, the escalation channels (400 with the path)', async () => {
    const a = await givenAccount();
    const session = await sessionOf(a.admin.email);
    const save = (step: Record<string, unknown>) =>
      invoke(
        createWorkflowHandler,
        apiEvent({
          method: 'POST',
          path: '/api/workflows',
          headers: bearer(session),
          body: {
            name: 'x',
            definition: { steps: [{ id: 'g', type: 'manual_approval', title: 't', reviewers: ['role:admin'], ...step }] },
          },
        }),
      );
    const pathsOf = (r: Awaited<ReturnType<typeof save>>) => ((r.json as any).errors ?? []).map((e: any) => e.path);
    let r = await save({ remind: { everySeconds: 30, max: 21 } });
    expectProblem(r, 400, 'VALIDATION_FAILED');
    expect(pathsOf(r)).toEqual(['definition.steps.0.remind.everySeconds', 'definition.steps.0.remind.max']);
    r = await save({ remind: { everySeconds: 60, max: 0, extra: 1 } });
    expect(pathsOf(r).sort()).toEqual(['definition.steps.0.remind.extra', 'definition.steps.0.remind.max']);
    r = await save({ escalate: { afterSeconds: 59, reviewers: ['bob'] } });
    expect(pathsOf(r)).toEqual(['definition.steps.0.escalate.afterSeconds', 'definition.steps.0.escalate.reviewers.0']);
    r = await save({ timeoutSeconds: 600, escalate: { afterSeconds: 600, reviewers: ['role:member'] } });
    expectProblem(r, 400, 'VALIDATION_FAILED');
    expect(pathsOf(r)).toEqual(['definition.steps.0.escalate.afterSeconds']);
    r = await save({ escalate: { afterSeconds: 600, reviewers: ['role:member'], notify: [{ channel: 'nope' }] } });
    expectProblem(r, 400, 'VALIDATION_FAILED');
    expect(pathsOf(r)).toEqual(['definition.steps.0.escalate.notify.0.channel']);
    r = await save({ remind: { everySeconds: 3600, max: 3 }, escalate: { afterSeconds: 600, reviewers: ['role:member'] } });
    expect(r.status).toBe(201);
  });

  // Last: it reads what the tests above made Slack receive.
  it("every reminder, escalation and update sent to Slack above keeps Block Kit's limits, its text escaped", () => {
    const sent = chat.received.filter((r) => /^\/slack\/chat\.(postMessage|update)$/.test(r.path));
    expect(sent.length).toBeGreaterThan(0);
    for (const r of sent) expect(blockKitProblems(r.body), `${r.path} ${JSON.stringify(r.body).slice(0, 200)}`).toEqual([]);
  });
});
