import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createAccount } from '../../shared/domain/accounts.ts';
import { ALL_SCOPES, createKey } from '../../shared/domain/keys.ts';
import { createChannel } from '../../shared/domain/channels.ts';
import { createWorkflow } from '../../shared/domain/workflows.ts';
import { createWebhook } from '../../shared/domain/webhooks.ts';
import { WorkflowDefinition } from '../../shared/engine/definition.ts';
import { startRun } from '../../shared/engine/runs.ts';

/** The demo workflow: set → manual_approval → artifact, with an output. */
export const DEMO_DEFINITION = WorkflowDefinition.parse({
  variables: { env: { type: 'string', default: 'staging' }, amount: { type: 'number', default: 100 } },
  steps: [
    { id: 'prepare', type: 'set', values: { summary: "{% 'Deploy to ' & $vars.env %}" } },
    {
      id: 'approve',
      type: 'manual_approval',
      title: '{% $vars.summary %}',
      reviewers: ['role:admin'],
      timeoutSeconds: 86400,
      form: [{ name: 'ticket', type: 'string', required: true }],
      // The demo's email channel: the reviewers' mail lands in the SES emulator (`npm start` prints where).
      notify: [{ channel: 'mail' }],
    },
    {
      id: 'report',
      type: 'artifact',
      name: 'report.json',
      content: "{% { 'summary': $vars.summary, 'ticket': $vars.ticket, 'approvedBy': $steps.approve.decidedBy } %}",
    },
  ],
  output: "{% { 'summary': $vars.summary, 'ticket': $vars.ticket } %}",
});

/** What `npm start` writes to `DATA_DIR/demo.json` (docs/local-mode.md). */
export type Demo = {
  baseUrl: string;
  accountId: string;
  adminEmail: string;
  adminPassword: string;
  apiKey: string;
  workflowId: string | null;
  webhookId: string | null;
};

/**
 * On a fresh data folder, create the demo: an account on the Team plan, its admin, an API key with
 * every scope, a workflow with an approval step, a webhook bound to the key that starts it, and one run of it
 * waiting at its approval (the console shows it first). Returns the existing
 * demo when the folder was seeded before (data survives restarts).
 */
export async function seedDemo(dataDir: string, baseUrl: string, adminEmail = 'admin@demo.local', demoRun = true): Promise<Demo> {
  const file = join(dataDir, 'demo.json');
  if (existsSync(file)) {
    const demo = { ...(JSON.parse(readFileSync(file, 'utf8')) as Demo), baseUrl };
    writeFileSync(file, `${JSON.stringify(demo, null, 2)}\n`);
    return demo;
  }
  const adminPassword = randomBytes(12).toString('base64url');
  const { account, admin } = await createAccount({ name: 'Demo', plan: 'team', email: adminEmail, password: adminPassword });
  const key = await createKey(
    { accountId: account.accountId, userId: admin.userId },
    { name: 'demo key (all scopes)', scopes: ALL_SCOPES, validityDays: 365 },
  );
  const session = {
    kind: 'session' as const,
    accountId: account.accountId,
    userId: admin.userId,
    role: 'admin' as const,
    sessionId: 'seed',
  };
  await createChannel(session, { type: 'email', name: 'mail', from: 'approvals@demo.local' });
  const workflow = await createWorkflow(
    { accountId: account.accountId, userId: admin.userId, role: 'admin' },
    {
      name: 'Deploy with approval',
      description: 'Demo: set → manual_approval (mailed to the admins) → artifact',
      definition: DEMO_DEFINITION,
      recovery: false,
      editors: [],
    },
  );
  const webhook = await createWebhook(
    { kind: 'session', accountId: account.accountId, userId: admin.userId, role: 'admin', sessionId: 'seed' },
    { workflowId: workflow.workflowId, name: 'Demo deploy hook', apiKeyId: key.id, allowedSourceIps: [], enabled: true },
  );
  // One run of it, waiting at its approval: what the console shows first (Approvals, then the run's timeline).
  if (demoRun) await startRun({ workflow, trigger: 'api', variables: { env: 'production' }, startedBy: admin.userId });
  const demo: Demo = {
    baseUrl,
    accountId: account.accountId,
    adminEmail,
    adminPassword,
    apiKey: key.token,
    workflowId: workflow.workflowId,
    webhookId: webhook.webhookId,
  };
  writeFileSync(file, `${JSON.stringify(demo, null, 2)}\n`, { mode: 0o600 });
  return demo;
}

/** A demo workflow's schedule as the banner lists it. */
export type DemoSchedule = { id: string; name: string; expression: string; timezone: string; enabled: boolean; nextFireTimes: string[] };

/** The demo workflow's schedules (none until you create one; docs/schedules.md). */
export async function demoSchedules(demo: Demo): Promise<DemoSchedule[]> {
  if (!demo.workflowId) return [];
  const [{ listWorkflowSchedules }, { scheduleView }] = await Promise.all([
    import('../../shared/db/entities/schedule.ts'),
    import('../../shared/domain/schedules.ts'),
  ]);
  return (await listWorkflowSchedules(demo.accountId, demo.workflowId)).map((s) => scheduleView(s));
}

const scheduleLines = (demo: Demo, schedules: readonly DemoSchedule[]) => {
  const u = demo.baseUrl;
  if (!demo.workflowId) return [];
  return [
    `Schedules of the demo workflow: ${schedules.length === 0 ? 'none' : schedules.length}`,
    ...schedules.map(
      (s) => `  ${s.id}  ${s.expression} (${s.timezone})${s.enabled ? `  next: ${s.nextFireTimes[0] ?? 'none'}` : '  disabled'}  ${s.name}`,
    ),
    '  Add one that fires every minute (a console session: the login above prints its token):',
    `  curl -s -X POST ${u}/api/workflows/${demo.workflowId}/schedules -H 'Authorization: Bearer <token>' -H 'content-type: application/json' -d '{"name":"every minute","expression":"rate(1 minute)","variables":{"env":"staging"}}'`,
  ];
};

export function demoBanner(demo: Demo, schedules: readonly DemoSchedule[] = []): string {
  const u = demo.baseUrl;
  return [
    '',
    `Flowgate local stack ready at ${u}`,
    `  console: ${u}/console  (sign in as the admin below; a demo run waits for your approval)`,
    `  admin:   ${demo.adminEmail} / ${demo.adminPassword}`,
    `  API key: ${demo.apiKey}`,
    '',
    'Try it:',
    `  curl -s ${u}/api/v1/me -H 'Authorization: Bearer ${demo.apiKey}'`,
    `  curl -s ${u}/api/auth/login -H 'content-type: application/json' -d '{"email":"${demo.adminEmail}","password":"${demo.adminPassword}"}'`,
    ...(demo.webhookId
      ? [
          `  curl -s -X POST ${u}/api/webhooks/${demo.webhookId}/trigger -H 'Authorization: Bearer ${demo.apiKey}' -H 'content-type: application/json' -d '{"env":"production"}'`,
        ]
      : []),
    ...(demo.webhookId
      ? [
          'Then open the one-click approval link of the waiting run (it asks before it decides):',
          `  echo "${u}/api/webhook-trigger/approval/$(curl -s ${u}/api/v1/approvals -H 'Authorization: Bearer ${demo.apiKey}' | sed -E 's/.*"approvalId":"([^"]+)".*/\\1/')/approve?api_key=${demo.apiKey}"`,
        ]
      : []),
    ...(demo.workflowId
      ? [
          `  curl -s -X POST ${u}/api/v1/workflows/${demo.workflowId}/runs -H 'Authorization: Bearer ${demo.apiKey}' -H 'content-type: application/json' -d '{"variables":{"env":"production"}}'`,
          `  curl -s ${u}/api/v1/executions -H 'Authorization: Bearer ${demo.apiKey}'`,
        ]
      : []),
    `  OpenAPI: ${u}/api/v1/openapi.json`,
    ...scheduleLines(demo, schedules),
    '',
  ].join('\n');
}
