import { randomBytes } from 'node:crypto';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resetConfig } from '../../shared/config.ts';
import { startChatListener } from '../support/chat-listener.ts';
import { consoleContext, consoleStack, expectAccessible, expectNoCspViolations, shot, signIn } from '../support/console-browser.ts';
import { givenAccount, PASSWORD } from '../support/fixtures.ts';

/**
 * The console's secrets and channels pages in a browser. Secrets: create (each error at its field,
 * the hosts' bad line named), where each is used, "Replace value" (an empty value keeps it), delete
 * with its confirmation, and no page ever holding a value. Channels: create Slack and email channels,
 * "Send test" against the local Slack listener and the SES emulator, the write-only settings masked
 * and kept when saved unchanged, a channel's deliveries and "Redeliver", delete. A member reads both
 * lists only; another account's names and ids are 404. Every page: axe and no CSP violation.
 */

let env: Awaited<ReturnType<typeof consoleStack>>;
let browser: Browser;
let chat: Awaited<ReturnType<typeof startChatListener>>;
let acct: Awaited<ReturnType<typeof givenAccount>>;
let token: string;
let demoToken: string;

const api = (path: string, json?: unknown, method?: string) => env.api(path, { auth: token, json, method });
const mainText = (page: Page) =>
  page
    .locator('main')
    .textContent()
    .then((t) => t ?? '');

async function signedIn(email = acct.admin.email): Promise<{ context: BrowserContext; page: Page }> {
  const context = await consoleContext(browser);
  context.setDefaultTimeout(10_000);
  const page = await context.newPage();
  await signIn(page, env.url, email, PASSWORD);
  return { context, page };
}

/** Poll `read` until `done` (a page reloaded each time). */
async function until(page: Page, done: () => Promise<boolean>, timeoutMs = 15_000) {
  const end = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 500));
    await page.reload();
  }
}

/** Press a form's submit button and wait for the page its POST answers with (the URL may stay the same). */
async function submitted(page: Page, button: ReturnType<Page['getByRole']>) {
  // The navigation the POST starts, committed and loaded (not the page it leaves).
  await Promise.all([page.waitForNavigation({ waitUntil: 'load' }), button.click()]);
}

beforeAll(async () => {
  chat = await startChatListener();
  Object.assign(process.env, { SLACK_API_URL: chat.slackApi });
  resetConfig();
  env = await consoleStack('console-settings');
  browser = env.browser;
  acct = await givenAccount();
  const login = await env.api('/api/auth/login', { json: { email: acct.admin.email, password: PASSWORD } });
  expect(login.status, JSON.stringify(login.body)).toBe(200);
  token = login.body.token;
  const demo = await env.api('/api/auth/login', { json: { email: env.demo.adminEmail, password: env.demo.adminPassword } });
  demoToken = demo.body.token;
}, 120_000);
afterAll(async () => {
  await env?.stop();
  await chat?.stop();
});

describe('secrets', () => {
  const value = `sv-${randomBytes(12).toString('hex')}`;
  const replaced = `sv-${randomBytes(12).toString('hex')}`;

  it('creates a secret (errors at their fields, the value never sent back), shows where it is used, replaces its value, deletes it', async () => {
    const { context, page } = await signedIn();
    const seen: string[] = [];
    page.on('response', async (r) => {
      if (r.url().startsWith(env.url) && (r.headers()['content-type'] ?? '').startsWith('text/html'))
        seen.push(await r.text().catch(() => ''));
    });
    await page.goto(`${env.url}/console/secrets`);
    await expectAccessible(page);
    await page.getByRole('link', { name: 'Create secret' }).click();
    await page.getByLabel('Name').fill('api token');
    await page.getByLabel('Value').fill(value);
    await page.getByLabel('Allowed hosts').fill('api.example.com\nnot a host!');
    await submitted(page, page.getByRole('button', { name: 'Create secret' }));
    expect(await page.getByLabel('Name').getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator('#name-error').textContent()).toContain('A-Z');
    expect(await page.getByLabel('Allowed hosts').getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator('#allowedHosts-error').textContent()).toContain('line 2 (not a host!)');
    expect(await page.getByLabel('Allowed hosts').inputValue()).toBe('api.example.com\nnot a host!');
    expect(await page.getByLabel('Value').inputValue()).toBe('');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('name');
    await expectAccessible(page);
    await shot(page, 'secret-errors');
    await page.getByLabel('Name').fill('API_TOKEN');
    await page.getByLabel('Value').fill(value);
    await page.getByLabel('Allowed hosts').fill('api.example.com');
    await page.getByRole('button', { name: 'Create secret' }).click();
    await page.waitForURL(`${env.url}/console/secrets`);
    // A workflow that uses it.
    const wf = await api('/api/workflows', {
      name: 'Calls the API',
      definition: {
        steps: [
          {
            id: 'call',
            type: 'http_request',
            method: 'GET',
            url: 'https://api.example.com/v1',
            headers: { authorization: "{% 'Bearer ' & $secrets.API_TOKEN %}" },
          },
        ],
      },
    });
    expect(wf.status, JSON.stringify(wf.body)).toBe(201);
    await page.reload();
    const row = page.getByRole('row', { name: /API_TOKEN/ });
    expect(await row.textContent()).toContain('api.example.com');
    expect(await row.textContent()).toContain(`by ${acct.admin.email}`);
    expect(await row.textContent()).toContain('Calls the API');
    await expectAccessible(page);
    await shot(page, 'secrets-list');
    await shot(page, 'secrets-list', 'dark');
    // Replace value.
    await row.getByRole('link', { name: /Replace value/ }).click();
    expect(await page.getByLabel('New value').inputValue()).toBe('');
    await page.getByLabel('New value').fill(replaced);
    await page.getByRole('button', { name: 'Save' }).click();
    await page.waitForURL(`${env.url}/console/secrets`);
    // Only the rules, the value kept (empty).
    await page
      .getByRole('row', { name: /API_TOKEN/ })
      .getByRole('link', { name: /Replace value/ })
      .click();
    await expectAccessible(page);
    await page.getByLabel('Allowed hosts').fill('api.example.com\n*.example.org');
    await page.getByLabel('Member use').selectOption({ label: 'Members may use' });
    await page.getByRole('button', { name: 'Save' }).click();
    await page.waitForURL(`${env.url}/console/secrets`);
    const [stored] = (await api('/api/secrets')).body.items;
    expect(stored).toMatchObject({ name: 'API_TOKEN', allowedHosts: ['api.example.com', '*.example.org'], members: 'use' });
    expect(stored.updatedAt).toBeGreaterThan(stored.createdAt);
    // No page ever held a value.
    expect(seen.length).toBeGreaterThan(5);
    for (const html of seen) {
      expect(html).not.toContain(value);
      expect(html).not.toContain(replaced);
    }
    // Delete, confirmed.
    await page
      .getByRole('row', { name: /API_TOKEN/ })
      .getByRole('link', { name: /Delete/ })
      .click();
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe("Delete secret 'API_TOKEN'?");
    expect(await mainText(page)).toContain('Calls the API');
    await expectAccessible(page);
    await page.getByRole('button', { name: 'Delete' }).click();
    await page.waitForURL(`${env.url}/console/secrets`);
    expect(await page.getByRole('row', { name: /API_TOKEN/ }).count()).toBe(0);
    expect((await api('/api/secrets')).body.items).toEqual([]);
    expectNoCspViolations(context);
    await context.close();
  });

  it("shows members the list only, and answers another account's secret as none", async () => {
    const theirs = await env.api('/api/secrets', {
      auth: demoToken,
      json: { name: `DEMO_${randomBytes(3).toString('hex').toUpperCase()}`, value: 'x-demo' },
    });
    expect(theirs.status, JSON.stringify(theirs.body)).toBe(201);
    await api('/api/secrets', { name: 'SHARED', value: 'v-shared' });
    const member = await signedIn(acct.member.email);
    await member.page.goto(`${env.url}/console/secrets`);
    expect(await mainText(member.page)).toContain('SHARED');
    expect(await member.page.getByRole('link', { name: 'Create secret' }).count()).toBe(0);
    expect(await member.page.getByRole('link', { name: /Replace value/ }).count()).toBe(0);
    await expectAccessible(member.page);
    expect((await member.page.goto(`${env.url}/console/secrets/new`))?.status()).toBe(403);
    await member.context.close();
    const { context, page } = await signedIn();
    for (const path of [`/console/secrets/${theirs.body.name}/edit`, `/console/secrets/${theirs.body.name}/delete`]) {
      expect((await page.goto(`${env.url}${path}`))?.status(), path).toBe(404);
    }
    await page.goto(`${env.url}/console/secrets`);
    const csrf = (await page.locator('input[name=csrf]').first().getAttribute('value')) as string;
    const res = await page.request.post(`${env.url}/console/secrets/${theirs.body.name}/delete`, { form: { csrf }, maxRedirects: 0 });
    expect(res.status()).toBe(404);
    expect((await env.api('/api/secrets', { auth: demoToken })).body.items.map((s: { name: string }) => s.name)).toContain(
      theirs.body.name,
    );
    expectNoCspViolations(context);
    await context.close();
  });
});

describe('channels', () => {
  const botToken = `xoxb-${randomBytes(10).toString('hex')}`;
  const signingSecret = randomBytes(16).toString('hex');

  it('creates a Slack channel (errors at their fields), masks its token, sends a test, keeps the token when saved unchanged', async () => {
    const { context, page } = await signedIn();
    const seen: string[] = [];
    page.on('response', async (r) => {
      if (r.url().startsWith(env.url) && (r.headers()['content-type'] ?? '').startsWith('text/html'))
        seen.push(await r.text().catch(() => ''));
    });
    await page.goto(`${env.url}/console/channels`);
    await expectAccessible(page);
    await page.getByRole('link', { name: 'Create channel' }).click();
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Create Slack channel');
    await page.getByLabel('Name').fill('team-slack');
    await page.getByLabel('Bot token').fill('not-a-token');
    await page.getByLabel('Signing secret').fill(signingSecret);
    await page.getByLabel('Default channel').fill('#approvals');
    await submitted(page, page.getByRole('button', { name: 'Create channel' }));
    expect(await page.getByLabel('Bot token').getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator('#botToken-error').textContent()).toContain('Slack bot token');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('botToken');
    // The write-only values typed are not sent back: typed again.
    expect(await page.getByLabel('Bot token').inputValue()).toBe('');
    expect(await page.getByLabel('Signing secret').inputValue()).toBe('');
    expect(await page.getByLabel('Name').inputValue()).toBe('team-slack');
    expect(await page.getByRole('alert').textContent()).toContain('type them again');
    await expectAccessible(page);
    await page.getByLabel('Bot token').fill(botToken);
    await page.getByLabel('Signing secret').fill(signingSecret);
    await page.getByRole('button', { name: 'Create channel' }).click();
    await page.waitForURL(/\/console\/channels\/[a-z0-9_]+$/);
    const channelId = page.url().split('/').pop() as string;
    expect(await page.getByLabel('Bot token').inputValue()).toBe(`••••${botToken.slice(-4)}`);
    await submitted(page, page.getByRole('button', { name: 'Send test' }));
    expect(await page.getByRole('status').textContent()).toContain('Test message sent');
    const posts = chat.calls('chat.postMessage').filter((r) => r.headers.authorization === `Bearer ${botToken}`);
    expect(posts.map((r) => r.body.channel)).toEqual(['#approvals']);
    await expectAccessible(page);
    await shot(page, 'channel-page');
    await shot(page, 'channel-page', 'dark');
    // Saved unchanged (the masks sent back): the token is kept, so a test still goes out with it.
    await page.getByLabel('Name').fill('team-slack');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.waitForURL(`${env.url}/console/channels/${channelId}`);
    await page.getByLabel('Send to (optional)').fill('#deploys');
    await submitted(page, page.getByRole('button', { name: 'Send test' }));
    expect(await page.getByRole('status').textContent()).toContain('Test message sent');
    expect(chat.calls('chat.postMessage').filter((r) => r.headers.authorization === `Bearer ${botToken}`)).toHaveLength(2);
    for (const html of seen) {
      expect(html).not.toContain(botToken);
      expect(html).not.toContain(signingSecret);
    }
    expectNoCspViolations(context);
    await context.close();
  });

  it('creates an email channel and sends a test to my own address', async () => {
    const { context, page } = await signedIn();
    await page.goto(`${env.url}/console/channels/new?type=email`);
    await page.getByLabel('Name').fill('Mail');
    await page.getByLabel('From address').fill('approvals@example.com');
    await page.getByRole('button', { name: 'Create channel' }).click();
    await page.waitForURL(/\/console\/channels\/[a-z0-9_]+$/);
    await submitted(page, page.getByRole('button', { name: 'Send test' }));
    expect(await page.getByRole('status').textContent()).toContain('Test message sent');
    await page.goto(`${env.url}/console/channels`);
    expect(await mainText(page)).toContain('approvals@example.com');
    await expectAccessible(page);
    await shot(page, 'channels-list');
    expectNoCspViolations(context);
    await context.close();
  });

  it("lists the channel's deliveries and redelivers one; deletes the channel after its confirmation", async () => {
    const wf = await api('/api/workflows', {
      name: 'Needs a yes',
      definition: {
        steps: [{ id: 'gate', type: 'manual_approval', title: 'Ship it?', reviewers: ['role:admin'], notify: [{ channel: 'team-slack' }] }],
      },
    });
    expect(wf.status, JSON.stringify(wf.body)).toBe(201);
    const channels = (await api('/api/channels')).body.items as { id: string; name: string }[];
    const slack = channels.find((c) => c.name === 'team-slack') as { id: string };
    const keyRes = await api('/api/keys', { name: 'runner', scopes: ['WORKFLOW_EXECUTE'], validityDays: 1 });
    expect(keyRes.status, JSON.stringify(keyRes.body)).toBe(201);
    const run = await env.api(`/api/v1/workflows/${wf.body.id}/runs`, { auth: keyRes.body.token, json: { variables: {} } });
    expect(run.status, JSON.stringify(run.body)).toBe(202);
    const { context, page } = await signedIn();
    await page.goto(`${env.url}/console/channels/${slack.id}`);
    const row = () => page.locator('#deliveries ~ * tbody tr, section[aria-labelledby=deliveries] tbody tr').first();
    await until(page, async () => ((await row().count()) > 0 ? ((await row().textContent()) ?? '').includes('DELIVERED') : false));
    expect(await row().textContent()).toContain(run.body.executionId);
    await expectAccessible(page);
    await row().getByRole('button', { name: 'Redeliver' }).click();
    await page.waitForURL(`${env.url}/console/channels/${slack.id}#deliveries`);
    await until(page, async () => {
      const cells = await row().getByRole('cell').allTextContents();
      return cells[3]?.includes('DELIVERED') === true && cells[4] === '2';
    });
    // Another account's channel and a delivery of another channel: 404.
    const theirs = await env.api('/api/channels', {
      auth: demoToken,
      json: { type: 'email', name: `d-${randomBytes(3).toString('hex')}`, from: 'a@example.com' },
    });
    expect(theirs.status, JSON.stringify(theirs.body)).toBe(201);
    for (const path of [`/console/channels/${theirs.body.id}`, `/console/channels/${theirs.body.id}/delete`]) {
      expect((await page.goto(`${env.url}${path}`))?.status(), path).toBe(404);
    }
    await page.goto(`${env.url}/console/channels/${slack.id}`);
    const csrf = (await page.locator('input[name=csrf]').first().getAttribute('value')) as string;
    const mail = channels.find((c) => c.name === 'Mail') as { id: string };
    const deliveryId = ((await page.locator('form[action*="/redeliver"]').first().getAttribute('action')) as string).split('/')[5];
    const cross = await page.request.post(`${env.url}/console/channels/${mail.id}/deliveries/${deliveryId}/redeliver`, {
      form: { csrf },
      maxRedirects: 0,
    });
    expect(cross.status()).toBe(404);
    const foreignDelete = await page.request.post(`${env.url}/console/channels/${theirs.body.id}/delete`, {
      form: { csrf },
      maxRedirects: 0,
    });
    expect(foreignDelete.status()).toBe(404);
    // Delete, confirmed.
    await page.getByRole('link', { name: 'Delete' }).click();
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe("Delete channel 'team-slack'?");
    await expectAccessible(page);
    await page.getByRole('button', { name: 'Delete' }).click();
    await page.waitForURL(`${env.url}/console/channels`);
    expect(await mainText(page)).not.toContain('team-slack');
    // The member reads the list, not the settings' forms.
    const member = await signedIn(acct.member.email);
    await member.page.goto(`${env.url}/console/channels/${mail.id}`);
    expect(await member.page.getByRole('button', { name: 'Send test' }).count()).toBe(0);
    expect((await member.page.goto(`${env.url}/console/channels/new`))?.status()).toBe(403);
    await member.context.close();
    expectNoCspViolations(context);
    await context.close();
  });
});
