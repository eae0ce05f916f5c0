import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resetConfig } from '../../shared/config.ts';
import { createAccount } from '../../shared/domain/accounts.ts';
import { startChatListener } from '../support/chat-listener.ts';
import { consoleContext, consoleStack, expectAccessible, expectNoCspViolations, shot, signIn } from '../support/console-browser.ts';
import { PASSWORD, uniqueEmail } from '../support/fixtures.ts';

/**
 * A new administrator's first day, in the browser alone, as a new user would go: sign in, create a
 * key, write a workflow in the editor (fixing the error it reports), bind a webhook to it with the
 * key, trigger it with the curl the page shows, watch the run finish, add a schedule, add a Slack
 * channel and send it a test, add a member; then find each of those changes in the audit log, once,
 * as theirs, from the console. Axe and the CSP on every page on the way.
 */

const run = promisify(execFile);
let env: Awaited<ReturnType<typeof consoleStack>>;
let context: BrowserContext;
let page: Page;
let chat: Awaited<ReturnType<typeof startChatListener>>;
const admin = { email: uniqueEmail('journey-admin'), password: PASSWORD };
const member = uniqueEmail('journey-member');
let adminId = '';

const WITH_ERROR = JSON.stringify({ steps: [{ id: 'greet', type: 'sett', values: { greeting: 'Hello {% $vars.who %}' } }] }, null, 2);
const FIXED = JSON.stringify(
  {
    variables: { who: { type: 'string', default: 'world' } },
    steps: [{ id: 'greet', type: 'set', values: { greeting: "{% 'Hello ' & $vars.who %}" } }],
    output: '{% $steps.greet.output.greeting %}',
  },
  null,
  2,
);

const h1 = () => page.getByRole('heading', { level: 1 }).textContent();
/** Click and wait for the page it loads. */
const navigating = (click: Promise<void>) => Promise.all([page.waitForEvent('load'), click]);
/** Axe and the CSP on the page as it is. */
async function checked(name?: string) {
  await expectAccessible(page);
  expectNoCspViolations(context);
  if (name) await shot(page, name);
}

beforeAll(async () => {
  // Slack's Web API is a listener on 127.0.0.1 that answers as Slack documents.
  chat = await startChatListener();
  Object.assign(process.env, { SLACK_API_URL: chat.slackApi });
  resetConfig();
  env = await consoleStack('console-journey', { demoRun: false });
  adminId = (await createAccount({ name: 'Journey Ltd', plan: 'team', email: admin.email, password: admin.password })).admin.userId;
  context = await consoleContext(env.browser);
  await context.grantPermissions(['clipboard-read', 'clipboard-write']);
  page = await context.newPage();
}, 120_000);
afterAll(async () => {
  await env?.stop();
  await chat?.stop();
});

describe("a new administrator's first day, in the browser", () => {
  let token = '';
  let workflowId = '';
  let executionId = '';

  it('signs in and creates an API key; the token is shown once', async () => {
    await page.goto(`${env.url}/console`);
    await signIn(page, env.url, admin.email, admin.password);
    expect(await page.getByRole('navigation', { name: 'Console' }).textContent()).toContain(admin.email);
    await checked();
    await page.getByRole('navigation', { name: 'Console' }).getByText('Settings').click();
    await navigating(page.getByRole('link', { name: 'API keys' }).click());
    await navigating(page.getByRole('link', { name: 'Create key' }).click());
    await page.getByLabel('Name').fill('Journey key');
    await page.getByLabel('WEBHOOK_TRIGGER').check();
    await page.getByLabel('WORKFLOW_READ').check();
    await page.getByLabel('Validity (days)').fill('30');
    await navigating(page.getByRole('button', { name: 'Create key' }).click());
    expect(await page.getByRole('main').textContent()).toContain('This token is shown only once');
    token = await page.getByLabel('Token').inputValue();
    expect(token).toMatch(/^dyk_/);
    await checked();
  });

  it('writes a workflow in the editor: the reported error is fixed, the graph drawn, the workflow saved', async () => {
    await navigating(page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Workflows' }).click());
    await navigating(page.getByRole('link', { name: 'New workflow' }).click());
    await page.getByLabel('Name', { exact: true }).fill('Journey');
    await page.getByLabel('Definition', { exact: true }).fill(WITH_ERROR);
    const errors = page.getByRole('region', { name: '1 error in the definition' });
    await errors.waitFor();
    expect(await errors.textContent()).toContain("Line 5, column 7 — steps.0.type: unknown step type 'sett': did you mean 'set'?");
    await checked();
    await page.getByLabel('Definition', { exact: true }).fill(FIXED);
    await page.getByRole('region', { name: 'No errors: the definition is valid' }).waitFor();
    await page.getByRole('img', { name: 'Graph of the draft' }).getByText('greet', { exact: true }).waitFor();
    await navigating(page.getByRole('button', { name: 'Save' }).click());
    expect(await h1()).toBe('Journey');
    workflowId = new URL(page.url()).pathname.split('/').at(-1) as string;
    expect(workflowId).toMatch(/^wf_/);
    await checked();
  });

  it('binds a webhook to it with the key, and the curl the page shows starts a run that finishes', { timeout: 60_000 }, async () => {
    await navigating(page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Webhooks' }).click());
    await navigating(page.getByRole('link', { name: 'Create webhook' }).click());
    await page.getByLabel('Workflow').selectOption({ label: 'Journey' });
    await page.getByLabel('Name', { exact: true }).fill('Journey hook');
    await page.getByLabel('An API key of mine').check();
    const keyChoice = page.getByLabel('API key', { exact: true });
    await keyChoice.selectOption((await keyChoice.locator('option', { hasText: 'Journey key' }).getAttribute('value')) as string);
    await page.getByLabel('Variable 1').fill('who');
    // The curl example sends {"hello":"world"}: its field becomes the workflow's variable.
    await page.getByLabel('Field 1').fill('hello');
    await navigating(page.getByRole('button', { name: 'Create webhook' }).click());
    expect(await h1()).toBe('Journey hook');
    await checked();

    // The curl as shown, with the key in the variable it names; the service's public name is this stack here.
    const shown = (await page.locator('#curl-example').textContent()) ?? '';
    const base = process.env.PUBLIC_BASE_URL as string;
    expect(shown).toContain(`${base}/api/webhooks/`);
    const { stdout } = await run('bash', ['-c', shown.replaceAll(base, env.url)], {
      env: { ...process.env, FLOWGATE_API_KEY: token },
      timeout: 15_000,
    });
    executionId = (JSON.parse(stdout) as { executionId: string }).executionId;
    expect(executionId).toMatch(/^ex_/);

    // Watched in the console: the run's page, until it has finished.
    await page.goto(`${env.url}/console/runs/${executionId}?live=0`);
    await expect
      .poll(
        async () => {
          await page.reload();
          return page.getByText('SUCCEEDED', { exact: true }).first().isVisible();
        },
        { timeout: 30_000, interval: 500 },
      )
      .toBe(true);
    expect(await page.getByRole('main').textContent()).toContain('Hello world');
    await checked('journey-run');
  });

  it('adds a schedule for the workflow, with the next fire times previewed first', async () => {
    await navigating(page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Schedules' }).click());
    await navigating(page.getByRole('link', { name: 'Create schedule' }).first().click());
    await page.getByLabel('Workflow').selectOption({ label: 'Journey' });
    await page.getByLabel('Name').fill('Every morning');
    await page.getByLabel('Expression').fill('cron(0 8 * * ? *)');
    await page.getByLabel('Timezone').fill('Europe/Paris');
    await navigating(page.getByRole('button', { name: 'Preview' }).click());
    expect((await page.getByRole('main').textContent())?.match(/\d{4}-\d{2}-\d{2} 08:00/g)?.length).toBe(5);
    await checked();
    await navigating(page.getByRole('button', { name: 'Create schedule' }).click());
    const row = page.getByRole('row', { name: /Every morning/ });
    expect(await row.textContent()).toContain('cron(0 8 * * ? *)');
    await checked();
  });

  it('adds a Slack channel and sends it a test', async () => {
    const botToken = `xoxb-${randomBytes(10).toString('hex')}`;
    await page.getByRole('navigation', { name: 'Console' }).getByText('Settings').click();
    await navigating(page.getByRole('link', { name: 'Channels' }).click());
    await navigating(page.getByRole('link', { name: 'Create channel' }).click());
    expect(await h1()).toBe('Create Slack channel');
    await page.getByLabel('Name').fill('ops-slack');
    await page.getByLabel('Bot token').fill(botToken);
    await page.getByLabel('Signing secret').fill(randomBytes(16).toString('hex'));
    await page.getByLabel('Default channel').fill('#ops');
    await navigating(page.getByRole('button', { name: 'Create channel' }).click());
    await navigating(page.getByRole('button', { name: 'Send test' }).click());
    expect(await page.getByRole('status').textContent()).toContain('Test message sent');
    const posts = chat.calls('chat.postMessage').filter((r) => r.headers.authorization === `Bearer ${botToken}`);
    expect(posts.map((r) => r.body.channel)).toEqual(['#ops']);
    await checked();
  });

  it('adds a member, whose initial password is shown once', async () => {
    await page.getByRole('navigation', { name: 'Console' }).getByText('Settings').click();
    await navigating(page.getByRole('link', { name: 'Members' }).click());
    await navigating(page.getByRole('link', { name: 'Add member' }).click());
    await page.getByLabel('Email').fill(member);
    await page.getByLabel('Role').selectOption('member');
    await navigating(page.getByRole('button', { name: 'Add member' }).click());
    expect(await page.getByLabel('Initial password').inputValue()).toMatch(/^\S{12,}$/);
    await checked();
  });

  it('finds each of those changes in the audit log, once, as theirs, from the console', async () => {
    await page.getByRole('navigation', { name: 'Console' }).getByText('Settings').click();
    await navigating(page.getByRole('link', { name: 'Audit log' }).click());
    await checked('journey-audit');
    const CHANGES = [
      ['key.created', 'Journey key'],
      ['workflow.created', 'Journey'],
      ['webhook.created', 'Journey hook'],
      ['schedule.created', 'Every morning'],
      ['channel.created', 'ops-slack'],
      ['channel.tested', 'ops-slack'],
      ['member.added', member],
    ] as const;
    // On the page: a row each, with the channel and the address.
    for (const [action, name] of CHANGES) {
      const row = page.getByRole('row').filter({ hasText: action }).filter({ hasText: name });
      expect(await row.count(), action).toBe(1);
      const cells = await row.getByRole('cell').allTextContents();
      expect(cells, action).toContain('console');
      expect(cells, action).toContain('127.0.0.1');
    }
    // The same entries in full, as the page exports them.
    const href = (await page.getByRole('link', { name: 'Export NDJSON' }).getAttribute('href')) as string;
    const res = await page.request.get(`${env.url}${href}`);
    expect(res.headers()['content-type']).toBe('application/x-ndjson');
    const entries = (await res.text())
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { action: string; actor: { userId?: string }; channel: string; ip?: string; object: { name?: string } });
    for (const [action, name] of CHANGES) {
      const found = entries.filter((e) => e.action === action && e.object.name === name);
      expect(found, action).toHaveLength(1);
      expect(found[0], action).toMatchObject({ actor: { userId: adminId }, channel: 'console', ip: '127.0.0.1' });
    }
    expect(entries.filter((e) => e.action === 'session.signed_in' && e.channel === 'console').length).toBeGreaterThanOrEqual(1);
  });
});
