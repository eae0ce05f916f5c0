import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resetConfig } from '../../shared/config.ts';
import { listApprovalMessages } from '../../shared/db/entities/approval-message.ts';
import { type Execution, getExecution } from '../../shared/db/entities/execution.ts';
import { createChannel } from '../../shared/domain/channels.ts';
import { createWorkflow } from '../../shared/domain/workflows.ts';
import { WorkflowDefinition } from '../../shared/engine/definition.ts';
import { startRun } from '../../shared/engine/runs.ts';
import { startChatListener } from '../support/chat-listener.ts';
import { eventually, startWorkers, useOwnQueues } from '../support/engine.ts';
import { adminSession, givenAccount } from '../support/fixtures.ts';

// Issue 24's rate case, in a file of its own (it is slow): 200 approvals requested at once, each told
// on three channels (a mail to the reviewer, a Slack message, a Teams card), are all delivered and
// none twice, through the real queues, workers, SES emulator and the chat listener.

let chat: Awaited<ReturnType<typeof startChatListener>>;
let stopWorkers: () => Promise<unknown>;
beforeAll(async () => {
  chat = await startChatListener();
  await useOwnQueues({ SLACK_API_URL: chat.slackApi, HTTP_STEP_ALLOWLIST: '127.0.0.1/32' });
  stopWorkers = startWorkers();
});
afterAll(async () => {
  await stopWorkers?.();
  await chat.stop();
  resetConfig();
});

const RUNS = 200;

describe('approval messages under load', { timeout: 300_000 }, () => {
  it(`${RUNS} approvals requested at once, 3 channels each: every message delivered, none twice`, async () => {
    const a = await givenAccount();
    const actor = adminSession(a);
    const tag = randomBytes(4).toString('hex');
    await createChannel(actor, { type: 'slack', name: 'ops', botToken: 'xoxb-load', signingSecret: 'a'.repeat(32) });
    await createChannel(actor, { type: 'email', name: 'mail', from: 'approvals@example.com' });
    await createChannel(actor, { type: 'teams', name: 'teams', webhookUrl: `${chat.base}/teams/load-${tag}` });
    const definition = WorkflowDefinition.parse({
      steps: [
        {
          id: 'gate',
          type: 'manual_approval',
          title: `Load ${tag} {% $vars.n %}`,
          reviewers: ['role:admin'],
          notify: [{ channel: 'ops', to: `#load-${tag}` }, { channel: 'mail' }, { channel: 'teams' }],
        },
      ],
      variables: { n: { type: 'number', default: 0 } },
    });
    const workflow = await createWorkflow(actor, { name: 'load', definition, recovery: false, editors: [] });

    const started = await Promise.all(
      Array.from({ length: RUNS }, (_, n) => startRun({ workflow, trigger: 'api', variables: { n }, startedBy: a.admin.userId })),
    );
    const waiting = await eventually(
      () => Promise.all(started.map(({ execution: e }) => getExecution(e.accountId, e.executionId) as Promise<Execution>)),
      (runs) => runs.every((e) => e.status === 'WAITING_APPROVAL'),
      240_000,
    );
    const approvalIds = waiting.map((e) => e.approvalId as string);
    expect(new Set(approvalIds).size).toBe(RUNS);

    // Every approval recorded its three messages (one per channel and recipient).
    await eventually(
      async () => (await Promise.all(approvalIds.map((id) => listApprovalMessages(a.account.accountId, id)))).map((m) => m.length),
      (counts) => counts.every((c) => c === 3),
      240_000,
    );
    // And each provider was asked exactly once per approval.
    const idsIn = (bodies: unknown[]) => bodies.map((b) => approvalIds.find((id) => JSON.stringify(b).includes(id)));
    const slack = idsIn(
      chat
        .calls('chat.postMessage')
        .filter((c) => c.body.channel === `#load-${tag}`)
        .map((c) => c.body),
    );
    const teams = idsIn(chat.calls(`/teams/load-${tag}`).map((c) => c.body));
    const store = (await (await fetch(`${process.env.AWS_ENDPOINT_URL_SESV2}/store`)).json()) as { emails: { body: { text: string } }[] };
    const mails = idsIn(store.emails.filter((m) => m.body.text.includes(`Load ${tag} `)).map((m) => m.body.text));
    for (const sent of [slack, teams, mails]) {
      expect(sent).toHaveLength(RUNS);
      expect(new Set(sent).size).toBe(RUNS);
      expect(sent.every((id) => id !== undefined)).toBe(true);
    }
  });
});
