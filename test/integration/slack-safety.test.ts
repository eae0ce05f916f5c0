import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resetConfig } from '../../shared/config.ts';
import { type Approval, getApproval } from '../../shared/db/entities/approval.ts';
import { type Execution, getExecution } from '../../shared/db/entities/execution.ts';
import { createChannel } from '../../shared/domain/channels.ts';
import { createWorkflow } from '../../shared/domain/workflows.ts';
import { WorkflowDefinition } from '../../shared/engine/definition.ts';
import { startRun } from '../../shared/engine/runs.ts';
import { startChatListener } from '../support/chat-listener.ts';
import { eventually, startWorkers, useOwnQueues } from '../support/engine.ts';
import { adminSession, givenAccount } from '../support/fixtures.ts';
import { slackInteraction } from '../support/slack-interactions.ts';
import { blockKitProblems, controlSequences } from '../support/slack-block-kit.ts';

// Issue 31, findings 1, 2 and 11, end to end: what a run puts in an approval reaches Slack escaped
// and within Block Kit's limits (post, click answer, chat.update), and a signed interaction's
// `response_url` is posted to only on Slack's own host, under the egress rules of http_request.

let chat: Awaited<ReturnType<typeof startChatListener>>;
let stopWorkers: () => Promise<unknown>;
/** A listener on every local address (`::`, dual stack): whatever reaches it is a request that escaped the rules. */
let trap: Server;
let trapPort: number;
const trapped: string[] = [];
const SIGNING = randomBytes(16).toString('hex');
const TOKEN = 'xoxb-31-safety-token';
const SLACK_HOST = '127.0.0.1';

const useHosts = (hosts: string) => {
  process.env.SLACK_RESPONSE_HOSTS = hosts;
  resetConfig();
};

beforeAll(async () => {
  chat = await startChatListener();
  // The listener on 127.0.0.1 stands in for hooks.slack.com; the allowlist lets http_request reach it too.
  await useOwnQueues({ SLACK_API_URL: chat.slackApi, HTTP_STEP_ALLOWLIST: '127.0.0.1/32', SLACK_RESPONSE_HOSTS: SLACK_HOST });
  stopWorkers = startWorkers();
  trap = createServer((req, res) => {
    trapped.push(`${req.method} ${req.headers.host} ${req.url}`);
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
  });
  await new Promise<void>((r) => trap.listen(0, '::', r));
  trapPort = (trap.address() as { port: number }).port;
});
afterAll(async () => {
  await stopWorkers?.();
  await chat.stop();
  await new Promise<void>((r) => trap.close(() => r()));
  resetConfig();
});

const HOSTILE_NOTE = '<!channel> <https://evil.example/phish|Open the Flowgate review page> & <@U0123ABCD>';

async function givenApproval(variables: Record<string, string>) {
  const a = await givenAccount();
  const actor = adminSession(a);
  const adminSlack = `U${randomBytes(4).toString('hex').toUpperCase()}`;
  chat.users.set(adminSlack, a.admin.email);
  const channel = await createChannel(actor, { type: 'slack', name: 'ops', botToken: TOKEN, signingSecret: SIGNING });
  const conversation = `#safety-${randomBytes(4).toString('hex')}`;
  const definition = WorkflowDefinition.parse({
    steps: [
      {
        id: 'gate',
        type: 'manual_approval',
        title: '{% $vars.title %}',
        description: '{% $vars.note %}',
        reviewers: ['role:admin'],
        form: Array.from({ length: 12 }, (_, i) => ({
          name: `f${i + 1}`,
          type: 'string',
          label: `<@U0${i}> F${i + 1}`,
          default: '{% $vars.note %}',
        })),
        notify: [{ channel: 'ops', to: conversation }],
      },
    ],
    variables: { title: { type: 'string', default: '' }, note: { type: 'string', default: '' } },
  });
  const workflow = await createWorkflow(actor, { name: '<!here> release & co', definition, recovery: false, editors: [] });
  const { execution } = await startRun({ workflow, trigger: 'api', variables, startedBy: a.admin.userId });
  const e = await eventually(
    () => getExecution(execution.accountId, execution.executionId) as Promise<Execution>,
    (x) => x.status === 'WAITING_APPROVAL',
    30_000,
  );
  const approval = (await getApproval(e.accountId, e.approvalId as string)) as Approval;
  const [posted] = await eventually(
    async () => chat.calls('chat.postMessage').filter((c) => c.body.channel === conversation),
    (p) => p.length === 1,
    30_000,
  );
  return { e, approval, channelId: channel.id, adminSlack, posted: posted?.body };
}

/** A click as Slack sends it, signed with the channel's secret, answering to `responseUrl`. */
function click(channelId: string, p: { user: string; action: 'approve' | 'reject'; approvalId: string; responseUrl: string }) {
  const payload = {
    type: 'block_actions',
    user: { id: p.user },
    response_url: p.responseUrl,
    container: { type: 'message', channel_id: 'CSAFETY', message_ts: '1700000000.000200' },
    actions: [{ type: 'button', action_id: p.action, value: p.approvalId }],
  };
  return slackInteraction(channelId, payload, SIGNING);
}

const expectSafe = (message: unknown) => {
  expect(blockKitProblems(message)).toEqual([]);
  const json = JSON.stringify(message);
  for (const raw of ['<!channel>', '<!here>', '<@U0123ABCD>', '<https://evil.example']) expect(json).not.toContain(raw);
};

describe('Slack: a run cannot write mentions or links into its approval messages (findings 1, 2)', { timeout: 90_000 }, () => {
  it('the message posted, the answer to the click and the chat.update all carry the run’s text escaped, within the limits', async () => {
    const s = await givenApproval({ title: '', note: HOSTILE_NOTE });
    expectSafe(s.posted);
    const body = JSON.stringify(s.posted);
    expect(body).toContain('&lt;!channel&gt; &lt;https://evil.example/phish|Open the Flowgate review page&gt; &amp; &lt;@U0123ABCD&gt;');
    expect(body).toContain('Workflow *&lt;!here&gt; release &amp; co*');
    // The empty title has a header of its own; 12 fields show 10 and say that 2 more exist.
    expect(s.posted.blocks[0]).toEqual({ type: 'header', text: { type: 'plain_text', text: 'Approval of step gate' } });
    expect(s.posted.blocks.find((b: any) => b.fields)?.fields).toHaveLength(10);
    expect(body).toContain('2 more fields not shown here');

    const respond = `${chat.base}/respond/${randomBytes(4).toString('hex')}`;
    expect(
      (await click(s.channelId, { user: s.adminSlack, action: 'approve', approvalId: s.approval.approvalId, responseUrl: respond })).status,
    ).toBe(200);
    const [answer] = chat.received.filter((r) => `${chat.base}${r.path}` === respond).map((r) => r.body);
    expect(answer).toMatchObject({ replace_original: true });
    expectSafe(answer);
    expect(JSON.stringify(answer)).toContain('Approved by');
    const [updated] = await eventually(
      async () => chat.calls('chat.update').filter((c) => JSON.stringify(c.body).includes(s.approval.approvalId)),
      (u) => u.length === 1,
      30_000,
    );
    expectSafe(updated?.body);
    for (const t of [s.posted.text, answer.text, updated?.body.text]) expect(controlSequences(t)).toEqual([]);
  });
});

describe("Slack: an interaction's response_url goes to Slack's host only, under the egress rules (finding 11)", { timeout: 90_000 }, () => {
  const at = (host: string, path = 'x') => `http://${host}:${trapPort}/${path}`;
  const via = (to: string) => `${chat.base}/redirect/${randomBytes(3).toString('hex')}?to=${encodeURIComponent(to)}`;

  it('loopback, 0.0.0.0 and localhost, named or redirected to, get nothing; the click still decides and the message is updated', async () => {
    const s = await givenApproval({ title: 'Ship?', note: 'n' });
    // The stranger's refused click: only an ephemeral answer, and it goes nowhere.
    for (const responseUrl of [at('[::1]'), at('0.0.0.0'), at('localhost'), via(at('[::1]')), via(at('localhost')), via(at('0.0.0.0'))]) {
      const res = await click(s.channelId, { user: 'UNOBODY31', action: 'approve', approvalId: s.approval.approvalId, responseUrl });
      expect(res.status, responseUrl).toBe(200);
    }
    // The redirects were asked of the listener (Slack's host here), and not followed.
    expect(chat.received.filter((r) => r.path.startsWith('/redirect/'))).toHaveLength(3);
    // The control: the trap is reachable, and the listener's own response_url is posted to.
    expect((await fetch(at('127.0.0.1', 'control'), { method: 'POST' })).status).toBe(200);
    expect(trapped).toEqual([`POST 127.0.0.1:${trapPort} /control`]);
    trapped.length = 0;

    // A reviewer's click whose response_url is refused: decided all the same, the message edited with chat.update.
    const res = await click(s.channelId, {
      user: s.adminSlack,
      action: 'approve',
      approvalId: s.approval.approvalId,
      responseUrl: at('[::1]'),
    });
    expect(res.status).toBe(200);
    expect((await getApproval(s.e.accountId, s.approval.approvalId))?.status).toBe('APPROVED');
    const edited = chat
      .calls('chat.update')
      .filter((c) => c.body.channel === 'CSAFETY' && JSON.stringify(c.body).includes(s.approval.approvalId));
    expect(edited).toHaveLength(1);
    expectSafe(edited[0]?.body);
    expect(trapped).toEqual([]);
  });

  it('a host named as Slack’s still gets nothing at a loopback or unspecified address, named or redirected to', async () => {
    // As if an operator listed these as Slack's hosts: the egress rules (HTTP_STEP_ALLOWLIST permits 127.0.0.1 only) still refuse.
    useHosts(`${SLACK_HOST},[::1],0.0.0.0`);
    try {
      const s = await givenApproval({ title: 'Ship?', note: 'n' });
      for (const responseUrl of [at('[::1]'), at('0.0.0.0'), via(at('[::1]')), via(at('0.0.0.0'))]) {
        const res = await click(s.channelId, { user: 'UNOBODY31', action: 'reject', approvalId: s.approval.approvalId, responseUrl });
        expect(res.status, responseUrl).toBe(200);
      }
      expect(chat.received.filter((r) => r.path.startsWith('/redirect/'))).toHaveLength(5);
      expect(trapped).toEqual([]);
    } finally {
      useHosts(SLACK_HOST);
    }
  });

  it("by default only hooks.slack.com: the listener's own address is not posted to", async () => {
    delete process.env.SLACK_RESPONSE_HOSTS;
    resetConfig();
    try {
      const s = await givenApproval({ title: 'Ship?', note: 'n' });
      const respond = `${chat.base}/respond/${randomBytes(4).toString('hex')}`;
      await click(s.channelId, { user: 'UNOBODY31', action: 'approve', approvalId: s.approval.approvalId, responseUrl: respond });
      expect(chat.received.filter((r) => `${chat.base}${r.path}` === respond)).toEqual([]);
    } finally {
      useHosts(SLACK_HOST);
    }
  });
});
