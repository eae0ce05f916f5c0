import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handler as updateMemberHandler } from '../../functions/http/members/update.ts';
import { handler as reviewDecideHandler } from '../../functions/http/reviews/decide.ts';
import { handler as reviewPageHandler } from '../../functions/http/reviews/page.ts';
import { resetConfig } from '../../shared/config.ts';
import { type Approval, getApproval, listAudit } from '../../shared/db/entities/approval.ts';
import { listApprovalMessages } from '../../shared/db/entities/approval-message.ts';
import { listApprovalDeliveries } from '../../shared/db/entities/delivery.ts';
import { listEvents } from '../../shared/db/entities/run-events.ts';
import { type Execution, getExecution } from '../../shared/db/entities/execution.ts';
import { createUser } from '../../shared/domain/accounts.ts';
import { createChannel } from '../../shared/domain/channels.ts';
import { createWorkflow } from '../../shared/domain/workflows.ts';
import { expireApproval } from '../../shared/domain/expiry.ts';
import { cancelRun } from '../../shared/engine/cancel.ts';
import { WorkflowDefinition } from '../../shared/engine/definition.ts';
import { startRun } from '../../shared/engine/runs.ts';
import { startChatListener } from '../support/chat-listener.ts';
import { eventually, startWorkers, useOwnQueues } from '../support/engine.ts';
import { adminSession, givenAccount, PASSWORD, uniqueEmail } from '../support/fixtures.ts';
import { slackInteraction } from '../support/slack-interactions.ts';
import { apiEvent, bearer, expectProblem, invoke } from '../support/http.ts';
import { sessionOf } from '../support/sessions.ts';
import { blockKitProblems } from '../support/slack-block-kit.ts';

// An approval step's `notify` (docs/approvals-and-channels.md): a mail to each reviewer (read from the SES
// emulator), Slack messages and a Teams card (the listener), Slack clicks that decide, and every
// message brought up to date when the approval ends.

let chat: Awaited<ReturnType<typeof startChatListener>>;
let stopWorkers: () => Promise<unknown>;
beforeAll(async () => {
  chat = await startChatListener();
  // The listener stands in for Slack's API and its `response_url` host (hooks.slack.com).
  // A retry unit of 0.1 s (the default is a minute): a message a provider refused for now is tried again within a second.
  await useOwnQueues({
    SLACK_API_URL: chat.slackApi,
    HTTP_STEP_ALLOWLIST: '127.0.0.1/32',
    SLACK_RESPONSE_HOSTS: '127.0.0.1',
    DELIVERY_RETRY_SECONDS: '0.1',
  });
  stopWorkers = startWorkers();
});
afterAll(async () => {
  await stopWorkers?.();
  await chat.stop();
  resetConfig();
});

const SIGNING = randomBytes(16).toString('hex');
const TOKEN = 'xoxb-4242-channels-test-token';
type Mail = { destination: { to: string[] }; from: string; subject: string; body: { text: string; html: string } };
const mails = async (approvalId: string): Promise<Mail[]> => {
  const store = (await (await fetch(`${process.env.AWS_ENDPOINT_URL_SESV2}/store`)).json()) as { emails: Mail[] };
  return store.emails.filter((m) => m.body.text.includes(approvalId));
};
const slackCalls = (method: string, approvalId: string) =>
  chat.calls(method).filter((c) => JSON.stringify(c.body ?? '').includes(approvalId));
const blocks = (body: any) => (body.blocks ?? []) as { type: string; elements?: { action_id?: string; url?: string }[]; text?: any }[];
const textOf = (body: any) => JSON.stringify(body.blocks);

/** A click as Slack sends it: form-encoded `payload`, signed v0 with the channel's signing secret. */
function click(
  channelId: string,
  p: { user: string; action: 'approve' | 'reject'; approvalId: string; respond: string },
  opts: { at?: number; secret?: string } = {},
) {
  const payload = {
    type: 'block_actions',
    user: { id: p.user },
    response_url: `${chat.base}/respond/${p.respond}`,
    container: { type: 'message', channel_id: 'CDEPLOYS', message_ts: '1700000000.000100' },
    actions: [{ type: 'button', action_id: p.action, value: p.approvalId }],
  };
  return slackInteraction(channelId, payload, opts.secret ?? SIGNING, opts.at ?? Date.now());
}
const responses = (respond: string) => chat.received.filter((r) => r.path === `/respond/${respond}`).map((r) => r.body);

async function givenSetup() {
  const a = await givenAccount();
  const outsider = await createUser(a.account.accountId, uniqueEmail('outsider'), PASSWORD, 'member');
  const actor = adminSession(a);
  // The member records a Slack id; the admin and the outsider are found by email (users.info / users.lookupByEmail).
  const memberSlack = `U${randomBytes(4).toString('hex').toUpperCase()}`;
  const adminSlack = `U${randomBytes(4).toString('hex').toUpperCase()}`;
  const outsiderSlack = `U${randomBytes(4).toString('hex').toUpperCase()}`;
  chat.users.set(adminSlack, a.admin.email);
  chat.users.set(outsiderSlack, outsider.email);
  const recorded = await invoke(
    updateMemberHandler,
    apiEvent({
      method: 'PUT',
      path: `/api/members/${a.member.userId}`,
      headers: bearer(await sessionOf(a.admin.email)),
      params: { id: a.member.userId },
      body: { slackUserId: memberSlack },
    }),
  );
  expect(recorded.json).toMatchObject({ id: a.member.userId, slackUserId: memberSlack });
  const slack = await createChannel(actor, {
    type: 'slack',
    name: 'ops',
    botToken: TOKEN,
    signingSecret: SIGNING,
    defaultChannel: '#deploys',
  });
  await createChannel(actor, { type: 'email', name: 'mail', from: 'approvals@example.com' });
  const hook = `teams-${randomBytes(4).toString('hex')}`;
  await createChannel(actor, { type: 'teams', name: 'teams', webhookUrl: `${chat.base}/teams/${hook}` });
  const title = `Deploy ${randomBytes(4).toString('hex')}?`;
  const definition = WorkflowDefinition.parse({
    steps: [
      {
        id: 'gate',
        type: 'manual_approval',
        title,
        description: 'Ship the release to production.',
        reviewers: ['role:admin', `user:${a.member.userId}`],
        minApprovals: 2,
        form: [{ name: 'window', type: 'string', label: 'Window', default: 'tonight' }],
        notify: [
          { channel: 'ops', to: '#deploys' },
          { channel: 'ops', to: ['role:admin', `user:${a.member.userId}`] },
          { channel: 'mail' },
          { channel: 'teams' },
        ],
      },
      { id: 'after', type: 'set', values: { done: true } },
    ],
  });
  const workflow = await createWorkflow(actor, { name: 'release', definition, recovery: false, editors: [] });
  return { ...a, outsider, actor, slack, hook, title, workflow, memberSlack, adminSlack, outsiderSlack };
}

const read = (e: Pick<Execution, 'accountId' | 'executionId'>) => getExecution(e.accountId, e.executionId) as Promise<Execution>;
async function waitingRun(s: Awaited<ReturnType<typeof givenSetup>>) {
  const { execution } = await startRun({ workflow: s.workflow, trigger: 'api', variables: {}, startedBy: s.admin.userId });
  const e = await eventually(
    () => read(execution),
    (x) => x.status === 'WAITING_APPROVAL',
    30_000,
  );
  const approval = (await getApproval(e.accountId, e.approvalId as string)) as Approval;
  // Every message is out: 2 mails, 3 Slack messages (the channel, two DMs), 1 Teams card.
  await eventually(
    () => listApprovalMessages(e.accountId, approval.approvalId),
    (m) => m.length === 6,
    30_000,
  );
  return { e, approval };
}

describe('approval messages', { timeout: 120_000 }, () => {
  it('mails each reviewer, posts to Slack and Teams; Slack clicks decide once, every message ends up showing the outcome', async () => {
    const s = await givenSetup();
    const { e, approval } = await waitingRun(s);
    const id = approval.approvalId;

    // Email: one per reviewer, each with links of their own.
    const sent = await mails(id);
    expect(sent.map((m) => m.destination.to[0]).sort()).toEqual([s.admin.email, s.member.email].sort());
    for (const m of sent) {
      expect(m.from).toBe('approvals@example.com');
      expect(m.subject).toBe(`Approval needed: ${s.title}`);
      expect(m.body.text).toContain('Window: tonight');
      expect(m.body.text).toContain('0 of 2 approvals');
      expect(m.body.text).toContain(`/api/reviews/${id}?token=`);
      expect(m.body.html).toContain(`<h2>${s.title}</h2>`);
    }
    const linksOf = (m: Mail) => m.body.text.match(/https?:\/\/\S+/g)?.sort();
    expect(linksOf(sent[0] as Mail)).not.toEqual(linksOf(sent[1] as Mail));

    // Slack: the channel and a DM to each reviewer (the member by their recorded id, the admin by email).
    const posted = slackCalls('chat.postMessage', id);
    expect(posted.map((p) => p.body.channel).sort()).toEqual(['#deploys', s.adminSlack, s.memberSlack].sort());
    const toChannel = posted.find((p) => p.body.channel === '#deploys')?.body;
    expect(blocks(toChannel)[0]).toEqual({ type: 'header', text: { type: 'plain_text', text: s.title } });
    expect(textOf(toChannel)).toContain('Quorum: 0 of 2 approvals');
    expect(textOf(toChannel)).toContain('Window: tonight');
    expect(textOf(toChannel)).toContain('release');
    const actions = blocks(toChannel).find((b) => b.type === 'actions')?.elements ?? [];
    expect(actions.map((x) => x.action_id)).toEqual(['approve', 'reject', 'review']);
    expect(actions[2]?.url).toBe(`http://flowgate.test/api/webhook-trigger/approval/${id}/approve`);
    expect(posted.every((p) => p.headers.authorization === `Bearer ${TOKEN}`)).toBe(true);
    expect(chat.calls('users.lookupByEmail').some((c) => c.query.email === s.admin.email)).toBe(true);

    // Teams: an Adaptive Card whose buttons open the confirmation page.
    const [card] = chat.calls(`/teams/${s.hook}`).map((c) => c.body.attachments[0].content);
    expect(card).toMatchObject({
      type: 'AdaptiveCard',
      body: [{ type: 'TextBlock', text: s.title }, expect.anything(), expect.anything()],
    });
    expect(card.actions).toEqual([
      { type: 'Action.OpenUrl', title: 'Review', url: `http://flowgate.test/api/webhook-trigger/approval/${id}/approve` },
    ]);

    // Forged and stale requests: 401; misdirected ones (no such Slack channel): 404; nothing changes.
    expectProblem(
      await click(s.slack.id, { user: s.adminSlack, action: 'approve', approvalId: id, respond: 'x' }, { secret: 'f'.repeat(32) }),
      401,
      'INVALID_SLACK_SIGNATURE',
    );
    expectProblem(
      await click(s.slack.id, { user: s.adminSlack, action: 'approve', approvalId: id, respond: 'x' }, { at: Date.now() - 301_000 }),
      401,
      'INVALID_SLACK_SIGNATURE',
    );
    expectProblem(
      await click('ch_01jzzzzzzzzzzzzzzzzzzzzzzz', { user: s.adminSlack, action: 'approve', approvalId: id, respond: 'x' }),
      404,
      'CHANNEL_NOT_FOUND',
    );
    expect(responses('x')).toEqual([]);

    // Refused clicks: an ephemeral explanation, nothing changes; the stranger's is audited.
    const stranger = await click(s.slack.id, { user: 'UNOBODY1', action: 'approve', approvalId: id, respond: 'stranger' });
    expect(stranger.status).toBe(200);
    expect(responses('stranger')).toEqual([
      expect.objectContaining({ response_type: 'ephemeral', replace_original: false, text: expect.stringContaining('not a member') }),
    ]);
    await click(s.slack.id, { user: s.outsiderSlack, action: 'approve', approvalId: id, respond: 'outsider' });
    expect(responses('outsider')).toEqual([
      expect.objectContaining({ response_type: 'ephemeral', text: 'You are not a reviewer of this approval.' }),
    ]);
    expect((await getApproval(e.accountId, id))?.approvals ?? 0).toBe(0);

    // The admin's vote: the message shows the quorum's progress, buttons still there.
    await click(s.slack.id, { user: s.adminSlack, action: 'approve', approvalId: id, respond: 'admin' });
    const [progress] = responses('admin');
    expect(progress).toMatchObject({ replace_original: true });
    expect(textOf(progress)).toContain('Quorum: 1 of 2 approvals');
    expect(blocks(progress).some((b) => b.type === 'actions')).toBe(true);
    await click(s.slack.id, { user: s.adminSlack, action: 'approve', approvalId: id, respond: 'again' });
    expect(responses('again')).toEqual([
      expect.objectContaining({ response_type: 'ephemeral', text: 'You already decided this approval.' }),
    ]);

    // The member's vote completes it: the run moves once, the message shows who and when, no buttons.
    await click(s.slack.id, { user: s.memberSlack, action: 'approve', approvalId: id, respond: 'member' });
    const [outcome] = responses('member');
    expect(textOf(outcome)).toMatch(new RegExp(`Approved by ${s.member.email} at \\d{4}-\\d\\d-\\d\\d`));
    expect(blocks(outcome).some((b) => b.type === 'actions')).toBe(false);
    const done = await eventually(
      () => read(e),
      (x) => x.status === 'SUCCEEDED',
      30_000,
    );
    expect(done.outputs.gate).toMatchObject({ decision: 'approve', decidedBy: s.member.userId, formData: { window: 'tonight' } });
    const events = (await listEvents(e.accountId, e.executionId, 500)).items;
    expect(events.filter((x) => x.type === 'execution.succeeded')).toHaveLength(1);
    const audit = await listAudit(e.accountId, id);
    expect(audit.filter((r) => r.outcome === 'decided').map((r) => [r.channel, r.userId])).toEqual([
      ['slack', s.admin.userId],
      ['slack', s.member.userId],
    ]);
    expect(
      audit
        .filter((r) => r.outcome === 'refused')
        .map((r) => r.code)
        .sort(),
    ).toEqual(['NOT_A_MEMBER', 'NOT_A_REVIEWER', 'REVIEWER_ALREADY_DECIDED']);

    // Every Slack message is brought up to date by the notify worker; Teams gets the outcome as a card.
    const updated = await eventually(
      async () => slackCalls('chat.update', id).filter((u) => textOf(u.body).includes('Approved by')),
      (u) => u.length === 3,
      30_000,
    );
    expect(updated.every((u) => !blocks(u.body).some((b) => b.type === 'actions'))).toBe(true);
    // The channel's message and the two DMs, each in its own conversation.
    expect(new Set(updated.map((u) => `${u.body.channel} ${u.body.ts}`)).size).toBe(3);
    const teamsCards = await eventually(
      async () => chat.calls(`/teams/${s.hook}`),
      (c) => c.length === 2,
      30_000,
    );
    const last = teamsCards[1]?.body.attachments[0].content;
    expect(JSON.stringify(last.body)).toContain(`Approved by ${s.member.email}`);
    expect(last.actions).toEqual([]);
  });

  it("deciding by a reviewer's mailed link (GET page, then its form POST) records reviewer and channel, and every Slack message shows the outcome", async () => {
    const s = await givenSetup();
    const { e, approval } = await waitingRun(s);
    const id = approval.approvalId;
    const sent = await mails(id);
    /** The mail's "Approve" link, opened as a browser would: GET shows the page and decides nothing; its form POST decides. */
    const decideByMail = async (to: string) => {
      const mail = sent.find((m) => m.destination.to[0] === to) as Mail;
      const link = new URL(/^Approve: (\S+)$/m.exec(mail.body.text)?.[1] as string);
      const query = Object.fromEntries(link.searchParams);
      const request = { path: link.pathname, params: { approvalId: id }, query, headers: { 'user-agent': 'MailClient/1.0' } };
      const page = await invoke(reviewPageHandler, apiEvent(request));
      expect(page.status).toBe(200);
      expect(page.body).toContain(`You are deciding as <strong>${to}</strong>`);
      expect((await getApproval(e.accountId, id))?.status).toBe('PENDING');
      // The page's form posts back its hidden page value (shared/http/page-form.ts).
      const pageValue = /<input type="hidden" name="page" value="([^"]+)"\/?>/.exec(page.body ?? '')?.[1] as string;
      const form = new URLSearchParams({ decision: 'approve', 'field.window': 'tonight', page: pageValue }).toString();
      const headers = { ...request.headers, 'content-type': 'application/x-www-form-urlencoded' };
      return invoke(reviewDecideHandler, apiEvent({ ...request, method: 'POST', headers, body: form }));
    };
    expect((await decideByMail(s.admin.email)).status).toBe(200);
    expect((await decideByMail(s.member.email)).status).toBe(200);

    const done = await eventually(
      () => read(e),
      (x) => x.status === 'SUCCEEDED',
      30_000,
    );
    expect(done.outputs.gate).toMatchObject({ decision: 'approve', decidedBy: s.member.userId });
    const audit = (await listAudit(e.accountId, id)).filter((r) => r.outcome === 'decided');
    expect(audit.map((r) => [r.channel, r.userId, r.userAgent])).toEqual([
      ['email', s.admin.userId, 'MailClient/1.0'],
      ['email', s.member.userId, 'MailClient/1.0'],
    ]);
    // The Slack messages (the channel's and both DMs) show who decided, without buttons.
    const updated = await eventually(
      async () => slackCalls('chat.update', id).filter((u) => textOf(u.body).includes(`Approved by ${s.member.email}`)),
      (u) => u.length === 3,
      30_000,
    );
    expect(updated.every((u) => !blocks(u.body).some((b) => b.type === 'actions'))).toBe(true);
  });

  it('a cancelled run marks its messages: cancelled, no buttons', async () => {
    const s = await givenSetup();
    const { e, approval } = await waitingRun(s);
    await cancelRun(e.accountId, e.executionId, 'not today');
    const updated = await eventually(
      async () => slackCalls('chat.update', approval.approvalId),
      (u) => u.length === 3,
      30_000,
    );
    for (const u of updated) {
      expect(textOf(u.body)).toContain('Cancelled with its run');
      expect(blocks(u.body).some((b) => b.type === 'actions')).toBe(false);
    }
    // A click on a message of the cancelled approval changes nothing.
    await click(s.slack.id, { user: s.memberSlack, action: 'approve', approvalId: approval.approvalId, respond: `late-${e.executionId}` });
    expect(responses(`late-${e.executionId}`)).toEqual([expect.objectContaining({ text: 'This approval was already handled.' })]);
  });

  it('an expired approval marks its messages: expired, no buttons', async () => {
    const s = await givenSetup();
    const { approval } = await waitingRun(s);
    expect(await expireApproval(approval)).toBe(true);
    const updated = await eventually(
      async () => slackCalls('chat.update', approval.approvalId),
      (u) => u.length === 3,
      30_000,
    );
    for (const u of updated) {
      expect(textOf(u.body)).toMatch(/Expired at .* without a decision/);
      expect(blocks(u.body).some((b) => b.type === 'actions')).toBe(false);
    }
  });

  it('a provider that answers 429 or 5xx is retried through the queue; what was sent is not sent again', async () => {
    const s = await givenSetup();
    const tag = randomBytes(4).toString('hex');
    await createChannel(s.actor, { type: 'teams', name: 'flaky', webhookUrl: `${chat.base}/teams/flaky-${tag}` });
    const definition = WorkflowDefinition.parse({
      steps: [
        {
          id: 'gate',
          type: 'manual_approval',
          title: `Retry ${tag}`,
          reviewers: ['role:admin'],
          notify: [{ channel: 'mail' }, { channel: 'ops', to: `#ratelimited-${tag}` }, { channel: 'flaky' }],
        },
      ],
    });
    const workflow = await createWorkflow(s.actor, { name: 'retry', definition, recovery: false, editors: [] });
    const { execution } = await startRun({ workflow, trigger: 'api', variables: {}, startedBy: s.admin.userId });
    const e = await eventually(
      () => read(execution),
      (x) => x.status === 'WAITING_APPROVAL',
      30_000,
    );
    const messages = await eventually(
      () => listApprovalMessages(e.accountId, e.approvalId as string),
      (m) => m.length === 3,
      60_000,
    );
    expect(messages.map((m) => m.channelType).sort()).toEqual(['email', 'slack', 'teams']);
    // Each provider was asked twice (refused, then accepted); the mail went once.
    expect(chat.calls(`/teams/flaky-${tag}`)).toHaveLength(2);
    expect(chat.calls('chat.postMessage').filter((c) => c.body.channel === `#ratelimited-${tag}`)).toHaveLength(2);
    expect(await mails(e.approvalId as string)).toHaveLength(1);
    // The delivery log holds each message: the mail delivered at once, Slack and Teams each refused once (with the provider's answer), then delivered.
    const { items } = await eventually(
      () => listApprovalDeliveries(e.accountId, e.approvalId as string, 10),
      (l) => l.items.length === 3 && l.items.every((d) => d.state === 'DELIVERED'),
      30_000,
    );
    const by = Object.fromEntries(items.map((d) => [d.channel, d]));
    expect(items.map((d) => d.kind)).toEqual(['approval-request', 'approval-request', 'approval-request']);
    expect(by.email?.attempts).toHaveLength(1);
    expect(by.slack).toMatchObject({ target: `ops: #ratelimited-${tag}`, tries: 2 });
    expect(by.slack?.attempts[0]?.status).toBe(429);
    expect(by.teams).toMatchObject({ target: 'flaky: webhook', tries: 2 });
    expect(by.teams?.attempts[0]?.status).toBe(503);
    expect(JSON.stringify(items)).not.toContain(TOKEN);
  });

  it('an approval inside a for_each sends its messages through its channels, which are checked at save too', async () => {
    const s = await givenSetup();
    const definition = WorkflowDefinition.parse({
      steps: [
        {
          id: 'each',
          type: 'for_each',
          items: "{% ['eu', 'us'] %}",
          steps: [
            {
              id: 'region-gate',
              type: 'manual_approval',
              title: "{% 'Deploy ' & $item & '?' %}",
              reviewers: ['role:admin'],
              notify: [{ channel: 'teams' }],
            },
          ],
        },
      ],
    });
    const workflow = await createWorkflow(s.actor, { name: 'regions', definition, recovery: false, editors: [] });
    const { execution } = await startRun({ workflow, trigger: 'api', variables: {}, startedBy: s.admin.userId });
    const e = await eventually(
      () => read(execution),
      (x) => x.status === 'WAITING_APPROVAL',
      30_000,
    );
    const messages = await eventually(
      () => listApprovalMessages(e.accountId, e.approvalId as string),
      (m) => m.length === 1,
      30_000,
    );
    expect(messages.map((m) => m.channelType)).toEqual(['teams']);

    const wrong = WorkflowDefinition.parse({
      steps: [
        {
          ...definition.steps[0],
          steps: [{ id: 'g', type: 'manual_approval', title: 't', reviewers: ['role:admin'], notify: [{ channel: 'nope' }] }],
        },
      ],
    });
    await expect(createWorkflow(s.actor, { name: 'x', definition: wrong, recovery: false, editors: [] })).rejects.toMatchObject({
      kind: 'invalid',
      extra: {
        body: {
          errors: [{ path: 'definition.steps.0.steps.0.notify.0.channel', message: expect.stringContaining('no channel named nope') }],
        },
      },
    });
  });

  it('a step naming a channel the account does not have is refused at save, with the path', async () => {
    const s = await givenSetup();
    const definition = WorkflowDefinition.parse({
      steps: [
        {
          id: 'g',
          type: 'manual_approval',
          title: 't',
          reviewers: ['role:admin'],
          notify: [{ channel: 'ops' }, { channel: 'nope' }, { channel: 'mail', to: '#x' }],
        },
      ],
    });
    await expect(createWorkflow(s.actor, { name: 'x', definition, recovery: false, editors: [] })).rejects.toMatchObject({
      kind: 'invalid',
      extra: {
        body: {
          errors: [
            { path: 'definition.steps.0.notify.1.channel', message: expect.stringContaining('no channel named nope') },
            { path: 'definition.steps.0.notify.2.to', message: expect.stringContaining('sends to reviewers') },
          ],
        },
      },
    });
  });

  // Last: it reads what the tests above made Slack receive.
  it("every message sent to Slack above (posts, updates, interaction answers) keeps Block Kit's limits, its text escaped", () => {
    const sent = chat.received.filter((r) => /^\/slack\/chat\.(postMessage|update)$|^\/respond\//.test(r.path));
    expect(sent.length).toBeGreaterThan(20);
    for (const r of sent) expect(blockKitProblems(r.body), `${r.path} ${JSON.stringify(r.body).slice(0, 200)}`).toEqual([]);
  });
});
