import { execFile } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { promisify } from 'node:util';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWebhook } from '../../shared/domain/webhooks.ts';
import { createWorkflow } from '../../shared/domain/workflows.ts';
import { consoleContext, consoleStack, expectAccessible, expectNoCspViolations, shot, signIn } from '../support/console-browser.ts';
import { adminSession, givenAccount } from '../support/fixtures.ts';

/**
 * The console's webhook pages in a browser: the list, creating a webhook by keyboard alone and per
 * mode (API key, HMAC, open with its warning and confirming box), each validation error at its field,
 * the secret shown once (a reload creates nothing more), the curl example run as shown, edit keeping
 * the secret, disable and enable as the trigger sees them, delete after its confirmation, another
 * account's id as a 404. Every page: axe (WCAG 2.1 A/AA), no CSP violation.
 */

const run = promisify(execFile);

let env: Awaited<ReturnType<typeof consoleStack>>;
let browser: Browser;
let context: BrowserContext;
let page: Page;

const WORKFLOW = 'Deploy with approval';
const SECRET = 'a-shared-secret-of-the-tests-0123';

beforeAll(async () => {
  env = await consoleStack('console-webhooks', { demoRun: false });
  browser = env.browser;
  context = await consoleContext(browser);
  page = await context.newPage();
  page.on('dialog', (d) => {
    throw new Error(`a dialog opened: ${d.message()}`);
  });
  await signIn(page, env.url, env.demo.adminEmail, env.demo.adminPassword);
});
afterAll(async () => env?.stop());

const textOf = async (l: Locator) => ((await l.textContent()) ?? '').trim();
const h1 = () => textOf(page.getByRole('heading', { level: 1 }));
const focusedId = () => page.evaluate(() => document.activeElement?.id);
const shown = (l: Locator) => l.first().waitFor({ state: 'visible', timeout: 5000 });

/** Do `act` (a click, a key) and wait for the document it navigates to (after a POST's 303: the page it leads to). */
async function navigating(act: Promise<unknown>) {
  const [res] = await Promise.all([
    page.waitForResponse((r) => r.request().isNavigationRequest() && r.request().frame() === page.mainFrame() && r.status() !== 303),
    act,
  ]);
  await page.waitForLoadState('load');
  return res;
}

/** Axe and the CSP on the page as it is now. */
async function checked(name?: string) {
  await expectAccessible(page);
  expectNoCspViolations(context);
  if (name) await shot(page, name);
}

/** The curl example as the page shows it, run in a shell with `vars` set; its JSON answer. */
async function runCurlExample(vars: Record<string, string>) {
  const shownScript = (await page.locator('#curl-example').textContent()) ?? '';
  // The URL is on the service's public address (PUBLIC_BASE_URL); in tests that name does not resolve, so it goes to the stack.
  const base = process.env.PUBLIC_BASE_URL as string;
  expect(shownScript).toContain(`'${base}/api/webhooks/`);
  const script = shownScript.replaceAll(base, env.url);
  const { stdout } = await run('bash', ['-c', script], { env: { ...process.env, ...vars }, timeout: 15_000 });
  return JSON.parse(stdout) as { executionId?: string; webhookId?: string; code?: string };
}

/** The run exists (the API reads it with the demo's key) and was started by `webhookId`. */
async function expectRunOf(executionId: string | undefined, webhookId: string) {
  expect(executionId).toMatch(/\S/);
  const got = await env.api(`/api/v1/executions/${executionId}`);
  expect(got.status, JSON.stringify(got.body)).toBe(200);
  expect(got.body.webhookId).toBe(webhookId);
  expect(got.body.trigger).toBe('webhook');
}

/** A legacy-HMAC trigger, signed with `secret`. */
const signedTrigger = (id: string, secret: string, body = '{}') =>
  fetch(`${env.url}/api/webhooks/${id}/trigger`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-webhook-signature': `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`,
    },
    body,
  });

const triggerUrlShown = async () => (await page.locator('#trigger-url').textContent())?.trim() ?? '';
const idFromTriggerUrl = async () => /\/api\/webhooks\/(wh_[0-9a-z]+)\/trigger$/.exec(await triggerUrlShown())?.[1] as string;
const listedCount = async () => (await env.api('/api/webhooks', { auth: await adminToken() })).body.items.length as number;

let token: string | undefined;
async function adminToken() {
  if (!token) {
    const login = await env.api('/api/auth/login', { json: { email: env.demo.adminEmail, password: env.demo.adminPassword } });
    token = login.body.token as string;
  }
  return token;
}

/** Tab forward until `id` has the focus (a keyboard user's way to a field). */
async function tabTo(id: string) {
  for (let i = 0; i < 60; i++) {
    if ((await page.evaluate(() => document.activeElement?.id)) === id) return;
    await page.keyboard.press('Tab');
  }
  throw new Error(`never reached #${id} with Tab`);
}

let hmacId: string;

describe('webhooks', () => {
  it('lists the webhooks with their workflow, authentication, state and last trigger, and offers "Create webhook"', async () => {
    await page.goto(`${env.url}/console/webhooks`);
    const row = page.getByRole('row', { name: /Demo deploy hook/ });
    expect(await row.getByRole('cell').allTextContents()).toEqual(['Demo deploy hook', WORKFLOW, 'API key', 'Enabled', 'never']);
    await checked('webhooks-list');
    await navigating(page.getByRole('link', { name: 'Create webhook' }).click());
    expect(new URL(page.url()).pathname).toMatch(/\/console\/webhooks\/new$/);
    await checked('webhook-new');
  });

  it('creates an HMAC webhook by keyboard alone; its page shows the secret once, and the curl shown starts a run', async () => {
    await page.goto(`${env.url}/console/webhooks/new`);
    await tabTo('wh-workflowId');
    await page.keyboard.type('Deploy');
    await tabTo('wh-name');
    await page.keyboard.type('Signed by keyboard');
    // Into the radio group (its first choice), then down to the shared secret.
    await page.keyboard.press('Tab');
    await page.keyboard.press('ArrowDown');
    await tabTo('wh-hmacSecret');
    await page.keyboard.type(SECRET);
    await tabTo('wh-var-0');
    await page.keyboard.type('env');
    await page.keyboard.press('Tab');
    await page.keyboard.type('target');
    for (let i = 0; i < 40 && !(await page.evaluate(() => document.activeElement?.textContent === 'Create webhook')); i++)
      await page.keyboard.press('Tab');
    const before = await listedCount();
    await navigating(page.keyboard.press('Enter'));
    expect(await h1()).toBe('Signed by keyboard');
    await shown(page.getByText('This secret is shown only once'));
    expect(await textOf(page.locator('#webhook-secret'))).toBe(SECRET);
    hmacId = await idFromTriggerUrl();
    expect(await triggerUrlShown()).toBe(`${process.env.PUBLIC_BASE_URL}/api/webhooks/${hmacId}/trigger`);
    expect(await listedCount()).toBe(before + 1);
    await shown(page.getByText('env ← target'));
    await checked('webhook-created');

    // The curl example, as shown, with the secret in the variable it names: a run of this webhook.
    expect(await page.getByText('FLOWGATE_WEBHOOK_SECRET').count()).toBe(2);
    const answer = await runCurlExample({ FLOWGATE_WEBHOOK_SECRET: SECRET });
    await expectRunOf(answer.executionId, hmacId);

    // A reload sends the form again: nothing more is created and the secret is not shown again.
    const again = await page.reload();
    expect(again?.status()).toBe(409);
    expect(await h1()).toBe('This form was sent already');
    expect(await page.getByText(SECRET).count()).toBe(0);
    expect(await listedCount()).toBe(before + 1);
    await checked();
    await navigating(page.getByRole('main').getByRole('link', { name: 'Webhooks' }).click());
    await navigating(page.getByRole('link', { name: 'Signed by keyboard' }).click());
    expect(await h1()).toBe('Signed by keyboard');
    expect(await page.locator('#webhook-secret').count()).toBe(0);
    // Its page: the run in its recent runs, the stats' chart and its table.
    await shown(page.getByRole('link', { name: answer.executionId as string }));
    expect(await page.locator('svg.triggers-chart[role="img"] title').count()).toBe(30);
    await checked('webhook-page');
  });

  it('shows each validation error at its field, keeps what was typed, focuses the first, and creates nothing', async () => {
    const before = await listedCount();
    await page.goto(`${env.url}/console/webhooks/new`);
    await page.getByLabel('A shared secret (HMAC)').check();
    await page.getByLabel('Shared secret', { exact: true }).fill('short');
    await page.getByLabel('Variable 1').fill('1bad');
    await page.getByLabel('Field 1').fill('x');
    await page.getByLabel('Field 2').fill('orphan');
    await page.getByLabel('Source IP allowlist').fill('10.0.0.1\n\n10.0.0.300\n2001:db8::/32');
    // With script, "Add row" adds a sixth row, labelled as the others.
    expect(await page.getByLabel('Variable 6').count()).toBe(0);
    await page.getByRole('button', { name: 'Add row' }).click();
    await page.getByLabel('Variable 6').fill('extra');
    await page.getByLabel('Field 6').fill('extra_field');
    await navigating(page.getByRole('button', { name: 'Create webhook' }).click());
    const error = (id: string) => page.locator(`#wh-${id}-error`);
    expect(await textOf(error('workflowId'))).toBe('choose the workflow the webhook starts');
    expect(await textOf(error('name'))).toContain('expected string to have >=1 characters');
    expect(await textOf(error('hmacSecret'))).toBe('at least 16 characters');
    expect(await textOf(error('var-0'))).toBe('must be a variable name (letters, digits, _; ≤ 64)');
    expect(await textOf(error('var-1'))).toBe('a variable name is required for this field');
    expect(await textOf(error('allowedSourceIps'))).toBe("line 3: '10.0.0.300' must be an IPv4 address, an IPv6 address or a CIDR range");
    for (const id of ['workflowId', 'name', 'hmacSecret', 'var-0', 'var-1', 'allowedSourceIps'])
      expect(await page.locator(`#wh-${id}`).getAttribute('aria-invalid')).toMatch('true');
    expect(await page.locator('#wh-allowedSourceIps').getAttribute('aria-describedby')).toMatch(/wh-allowedSourceIps-error/);
    // The first error's field has the focus; what was typed is kept (the secret is never sent back).
    expect(await focusedId()).toBe('wh-workflowId');
    expect(await page.getByLabel('Source IP allowlist').inputValue()).toBe('10.0.0.1\n\n10.0.0.300\n2001:db8::/32');
    expect(await page.getByLabel('Field 2').inputValue()).toBe('orphan');
    expect(await page.getByLabel('Variable 3').inputValue()).toBe('extra');
    expect(await page.getByLabel('A shared secret (HMAC)').isChecked()).toBe(true);
    expect(await page.getByLabel('Shared secret', { exact: true }).inputValue()).toBe('');
    expect(await listedCount()).toBe(before);
    await checked('webhook-errors');
  });

  it('creates a webhook bound to an API key of mine; its curl example with the key starts a run', async () => {
    await page.goto(`${env.url}/console/webhooks/new`);
    await page.getByLabel('Workflow').selectOption({ label: WORKFLOW });
    await page.getByLabel('Name', { exact: true }).fill('Keyed');
    await page.getByLabel('An API key of mine').check();
    await page.getByLabel('API key', { exact: true }).selectOption({ index: 1 });
    await navigating(page.getByRole('button', { name: 'Create webhook' }).click());
    expect(await h1()).toBe('Keyed');
    expect(await page.locator('#webhook-secret').count()).toBe(0);
    const id = await idFromTriggerUrl();
    await shown(page.getByText('FLOWGATE_API_KEY').first());
    const answer = await runCurlExample({ FLOWGATE_API_KEY: env.demo.apiKey });
    await expectRunOf(answer.executionId, id);
    // Without the key the same trigger is refused.
    expect((await fetch(`${env.url}/api/webhooks/${id}/trigger`, { method: 'POST' })).status).toBe(401);
    expectNoCspViolations(context);
  });

  it('makes an open webhook only with the confirming box ticked, and marks it "Open" in the list', async () => {
    const before = await listedCount();
    await page.goto(`${env.url}/console/webhooks/new`);
    await page.getByLabel('Workflow').selectOption({ label: WORKFLOW });
    await page.getByLabel('Name', { exact: true }).fill('Anyone');
    await page.getByLabel('Open: no authentication').check();
    await shown(page.getByText('anyone who has the URL of an open webhook can start runs'));
    await navigating(page.getByRole('button', { name: 'Create webhook' }).click());
    const box = page.getByLabel('I understand: anyone with the URL can start runs');
    expect(await textOf(page.locator('#wh-openConfirm-error'))).toBe('tick this box to make a webhook anyone with its URL can trigger');
    expect(await box.getAttribute('aria-invalid')).toMatch('true');
    expect(await focusedId()).toBe('wh-openConfirm');
    expect(await listedCount()).toBe(before);
    await checked();
    await box.check();
    await navigating(page.getByRole('button', { name: 'Create webhook' }).click());
    expect(await h1()).toBe('Anyone');
    const id = await idFromTriggerUrl();
    const answer = await runCurlExample({});
    await expectRunOf(answer.executionId, id);
    await page.goto(`${env.url}/console/webhooks`);
    await shown(page.getByRole('row', { name: /Anyone/ }).getByText('Open: no authentication'));
    await checked('webhooks-list-open');
    await shot(page, 'webhooks-list-open', 'dark');
  });

  it('edits a webhook and keeps its secret when the field is left empty', async () => {
    await page.goto(`${env.url}/console/webhooks/${hmacId}`);
    await navigating(page.getByRole('link', { name: 'Edit' }).click());
    expect(new URL(page.url()).pathname).toMatch(new RegExp(`/console/webhooks/${hmacId}/edit$`));
    expect(await page.getByLabel('Name', { exact: true }).inputValue()).toBe('Signed by keyboard');
    expect(await page.getByLabel('A shared secret (HMAC)').isChecked()).toBe(true);
    expect(await page.getByLabel('Shared secret', { exact: true }).inputValue()).toBe('');
    expect(await page.getByLabel('Variable 1').inputValue()).toBe('env');
    await checked('webhook-edit');
    await page.getByLabel('Name', { exact: true }).fill('Signed and renamed');
    await page.getByLabel('Source IP allowlist').fill('10.0.0.300');
    await navigating(page.getByRole('button', { name: 'Save' }).click());
    expect(await textOf(page.locator('#wh-allowedSourceIps-error'))).toBe(
      "line 1: '10.0.0.300' must be an IPv4 address, an IPv6 address or a CIDR range",
    );
    await page.getByLabel('Source IP allowlist').fill('');
    await navigating(page.getByRole('button', { name: 'Save' }).click());
    expect(new URL(page.url()).pathname, (await page.locator('.error').allTextContents()).join(' | ')).toMatch(
      new RegExp(`/console/webhooks/${hmacId}$`),
    );
    expect(await h1()).toBe('Signed and renamed');
    expect((await signedTrigger(hmacId, SECRET)).status).toBe(200);
  });

  it('disables (a trigger is refused with 409) and enables (accepted again)', async () => {
    await page.goto(`${env.url}/console/webhooks/${hmacId}`);
    await navigating(page.getByRole('button', { name: 'Disable' }).click());
    await shown(page.getByRole('button', { name: 'Enable' }));
    await shown(page.getByText('Disabled', { exact: true }));
    const refused = await signedTrigger(hmacId, SECRET);
    expect(refused.status).toBe(409);
    await navigating(page.getByRole('button', { name: 'Enable' }).click());
    await shown(page.getByRole('button', { name: 'Disable' }));
    expect((await signedTrigger(hmacId, SECRET)).status).toBe(200);
    expectNoCspViolations(context);
  });

  it('deletes after a confirmation that names the webhook; its URL then answers 404', async () => {
    await page.goto(`${env.url}/console/webhooks/${hmacId}`);
    await navigating(page.getByRole('link', { name: 'Delete' }).click());
    expect(await h1()).toBe("Delete webhook 'Signed and renamed'?");
    await checked('webhook-delete');
    await navigating(page.getByRole('button', { name: 'Delete webhook' }).click());
    expect(new URL(page.url()).pathname).toMatch(/\/console\/webhooks$/);
    expect(await page.getByRole('link', { name: 'Signed and renamed' }).count()).toBe(0);
    expect((await signedTrigger(hmacId, SECRET)).status).toBe(404);
  });

  it("answers another account's webhook, and an unknown one, with the same 404 page", async () => {
    const other = await givenAccount();
    const wf = await createWorkflow(adminSession(other), {
      name: 'theirs',
      definition: { steps: [{ id: 'only', type: 'set', values: {} }] },
      recovery: false,
      editors: [],
    } as never);
    const theirs = await createWebhook(adminSession(other), {
      workflowId: wf.workflowId,
      name: 'theirs',
      authMode: 'open',
      allowedSourceIps: [],
      enabled: true,
    });
    for (const path of [theirs.webhookId, `${theirs.webhookId}/edit`, `${theirs.webhookId}/delete`, `wh_${'0'.repeat(26)}`]) {
      const res = await page.goto(`${env.url}/console/webhooks/${path}`);
      expect(res?.status(), path).toBe(404);
      expect(await page.getByText('theirs').count()).toBe(0);
    }
    await checked();
  });
});
