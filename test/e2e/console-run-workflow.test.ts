import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorkflow } from '../../shared/domain/workflows.ts';
import { WorkflowDefinition } from '../../shared/engine/definition.ts';
import { consoleContext, consoleStack, expectAccessible, expectNoCspViolations, shot, signIn } from '../support/console-browser.ts';
import { givenAccount } from '../support/fixtures.ts';

/**
 * "Run workflow" in a browser (issue 44): a newcomer opens Workflows, presses "Run workflow", fills the
 * form built from the workflow's variables, presses "Start run" and lands on the new run's page; the
 * run succeeds with the values typed; a double submit starts one run; a refused value is shown at its
 * field with nothing started; a workflow without variables takes a JSON input; the start is on the
 * audit log; CSRF and another account's workflow refused; and docs/first-workflow.md, followed step by step with
 * its own definition. Every page: axe at 1280 and 390 px, no CSP violation.
 */

let env: Awaited<ReturnType<typeof consoleStack>>;
let browser: Browser;
/** The demo admin's API session, and the workflows made for these tests. */
let token: string;
let workflowId: string;
let bareId: string;

const XSS = '<img src=x onerror=alert(1)>';
const NAME = 'Deploy service';

const DEPLOY = {
  variables: {
    env: { type: 'string', default: 'staging', description: 'Where to deploy' },
    count: { type: 'number', description: 'How many instances' },
    dryRun: { type: 'boolean', default: true },
    regions: { type: 'array', default: ['eu'] },
  },
  steps: [{ id: 'plan', type: 'set', values: { total: '{% $vars.count * 2 %}' } }],
  output: "{% { 'env': $vars.env, 'count': $vars.count, 'dryRun': $vars.dryRun, 'regions': $vars.regions, 'total': $vars.total } %}",
};

async function createFlow(name: string, definition: unknown): Promise<string> {
  const res = await env.api('/api/workflows', { auth: token, json: { name, definition } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.id as string;
}

/** The workflow's runs, through the v1 API (the demo's key). */
const runsOf = async (id: string) =>
  (await env.api(`/api/v1/executions?workflowId=${id}&limit=50`)).body.items as { executionId: string; status: string }[];

async function until(id: string, statuses: string[], timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = (await env.api(`/api/v1/executions/${id}`)).body;
    if (statuses.includes(r.status)) return r;
    if (Date.now() > deadline) throw new Error(`run ${id} is ${r.status}, not ${statuses.join(' or ')}`);
    await new Promise((res) => setTimeout(res, 150));
  }
}

async function signedIn(opts: Parameters<typeof consoleContext>[1] = {}): Promise<{ context: BrowserContext; page: Page }> {
  const context = await consoleContext(browser, opts);
  context.setDefaultTimeout(90_000);
  const page = await context.newPage();
  page.on('dialog', (d) => {
    throw new Error(`a dialog opened: ${d.message()}`);
  });
  await signIn(page, env.url, env.demo.adminEmail, env.demo.adminPassword);
  return { context, page };
}

/** axe at 1280 px and at 390 px (a phone), then back. */
async function accessibleAtBothWidths(page: Page) {
  await page.setViewportSize({ width: 1280, height: 900 });
  await expectAccessible(page);
  await page.setViewportSize({ width: 390, height: 844 });
  await expectAccessible(page);
  await page.setViewportSize({ width: 1280, height: 900 });
}

/** Press a form's submit button and wait for the page its POST answers with (the URL may stay the same). */
async function submitted(page: Page, name: string) {
  await Promise.all([page.waitForNavigation({ waitUntil: 'load' }), page.getByRole('button', { name }).click()]);
}

/** The run id of the run page `page` is on. */
const runIdOf = (page: Page) => new URL(page.url()).pathname.split('/').pop() as string;

/** Open the form from the Workflows list, as a newcomer finds it. */
async function openFromList(page: Page, name: string) {
  await page.goto(`${env.url}/console`);
  await page.getByRole('link', { name: 'Workflows', exact: true }).first().click();
  await page
    .getByRole('row', { name: new RegExp(name) })
    .getByRole('link', { name: 'Run workflow', exact: true })
    .click();
  await page.waitForURL((u) => u.pathname.endsWith('/run'));
}

beforeAll(async () => {
  env = await consoleStack('console-run-workflow');
  browser = env.browser;
  const login = await env.api('/api/auth/login', { json: { email: env.demo.adminEmail, password: env.demo.adminPassword } });
  expect(login.status, JSON.stringify(login.body)).toBe(200);
  token = login.body.token;
  workflowId = await createFlow(NAME, DEPLOY);
  bareId = await createFlow('No variables', { steps: [{ id: 'only', type: 'set', values: {} }], output: '{% $vars %}' });
  // The console's functions loaded once before the first browser waits on them (a busy machine's first import is slow).
  expect((await fetch(`${env.url}/console/login`)).status).toBe(200);
}, 120_000);
afterAll(async () => env?.stop());

describe('Run workflow', { timeout: 240_000 }, () => {
  it('a newcomer starts a run from the Workflows list with the values typed; it succeeds with them, on the audit log', async () => {
    const { context, page } = await signedIn();
    await openFromList(page, NAME);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe(`Run ${NAME}`);
    // The fields at the variables' defaults; the one without a default is required.
    expect(await page.getByLabel('env').inputValue()).toBe('staging');
    expect(await page.getByLabel('count (required)').inputValue()).toBe('');
    expect(await page.getByLabel('dryRun').isChecked()).toBe(true);
    expect(JSON.parse(await page.getByLabel('regions').inputValue())).toEqual(['eu']);
    expect(await page.getByText('Where to deploy').isVisible()).toBe(true);
    await accessibleAtBothWidths(page);
    await shot(page, 'run-workflow-form');
    await shot(page, 'run-workflow-form', 'dark');
    await page.emulateMedia({ colorScheme: 'light' });

    await page.getByLabel('env').fill(`production ${XSS}`);
    await page.getByLabel('count (required)').fill('21');
    await page.getByLabel('dryRun').uncheck();
    await page.getByLabel('regions').fill('["eu", "us"]');
    await page.getByRole('button', { name: 'Start run' }).click();
    await page.waitForURL((u) => /^\/console\/runs\/ex_/.test(u.pathname));
    const id = runIdOf(page);
    const done = await until(id, ['SUCCEEDED', 'FAILED']);
    expect(done.status).toBe('SUCCEEDED');
    expect(done.trigger).toBe('api');
    const result = await env.api(`/api/v1/executions/${id}/result`);
    expect(result.body.output).toEqual({ env: `production ${XSS}`, count: 21, dryRun: false, regions: ['eu', 'us'], total: 42 });
    // The run's page shows the values typed (as text).
    await page.reload();
    const main = (await page.locator('main').textContent()) ?? '';
    expect(main).toContain('SUCCEEDED');
    expect(main).toContain(`production ${XSS}`);
    expect(await page.locator('main img').count()).toBe(0);
    await accessibleAtBothWidths(page);
    await shot(page, 'run-workflow-started');

    // On the audit log (the console's page: the API's list leaves the last seconds to settle).
    await page.goto(`${env.url}/console/audit?action=run.started`);
    const logged = (await page.locator('main').textContent()) ?? '';
    expect(logged).toContain('run.started');
    expect(logged).toContain(`workflow ${NAME} (version 1)`);
    expectNoCspViolations(context);
    await context.close();
  });

  it('a double submit of one form starts one run', async () => {
    const { context, page } = await signedIn();
    await page.goto(`${env.url}/console/workflows/${workflowId}`);
    await page.getByRole('navigation', { name: 'Workflow' }).getByRole('link', { name: 'Run workflow', exact: true }).click();
    await page.waitForURL((u) => u.pathname.endsWith('/run'));
    await page.getByLabel('count (required)').fill('3');
    const before = (await runsOf(workflowId)).length;
    // The same form sent twice at once (a double click), then its button pressed once more.
    const landed = await page.evaluate(async () => {
      const form = document.getElementById('run-form') as HTMLFormElement;
      const body = new URLSearchParams(new FormData(form) as unknown as Record<string, string>);
      const sent = await Promise.all([1, 2].map(() => fetch(form.action, { method: 'POST', body })));
      return sent.map((r) => new URL(r.url).pathname);
    });
    expect(landed[0]).toMatch(/^\/console\/runs\/ex_/);
    expect(landed[1]).toBe(landed[0]);
    await page.getByRole('button', { name: 'Start run' }).click();
    await page.waitForURL((u) => /^\/console\/runs\/ex_/.test(u.pathname));
    expect(new URL(page.url()).pathname).toBe(landed[0]);
    expect((await runsOf(workflowId)).length).toBe(before + 1);
    expect((await until(runIdOf(page), ['SUCCEEDED'])).variables).toMatchObject({ count: 3 });
    expectNoCspViolations(context);
    await context.close();
  });

  it('without scripts, refused values are shown at their fields, as typed, and nothing is started', async () => {
    const { context, page } = await signedIn({ javaScriptEnabled: false });
    await openFromList(page, NAME);
    const before = (await runsOf(workflowId)).length;
    await page.getByLabel('count (required)').fill('lots');
    await page.getByLabel('regions').fill('{"eu": ');
    await submitted(page, 'Start run');
    expect(new URL(page.url()).pathname).toBe(`/console/workflows/${workflowId}/run`);
    expect(await page.getByRole('alert').textContent()).toContain('The run was not started. 2 fields need a change');
    const count = page.getByLabel('count (required)');
    expect(await count.getAttribute('aria-invalid')).toBe('true');
    expect(await count.inputValue()).toBe('lots');
    expect(await page.locator('#var-count-error').textContent()).toBe('must be a number, such as 42 or -1.5');
    expect(await page.locator('#var-regions-error').textContent()).toMatch(/^is not JSON/);
    expect(await page.getByLabel('regions').inputValue()).toBe('{"eu": ');
    // (axe needs scripts: the refused form is checked with them below, the bare workflow's.)
    await shot(page, 'run-workflow-errors');

    // A required value left empty, and an array where an object... is an array: each message its own.
    await count.fill('');
    await page.getByLabel('regions').fill('{"eu": true}');
    await submitted(page, 'Start run');
    expect(await page.locator('#var-count-error').textContent()).toBe('is required: this variable has no default');
    expect(await page.locator('#var-regions-error').textContent()).toBe('must be an array in JSON');
    expect((await runsOf(workflowId)).length).toBe(before);

    // Fixed, the same form starts the run.
    await count.fill('1');
    await page.getByLabel('regions').fill('[]');
    await page.getByRole('button', { name: 'Start run' }).click();
    await page.waitForURL((u) => /^\/console\/runs\/ex_/.test(u.pathname));
    expect((await until(runIdOf(page), ['SUCCEEDED'])).variables).toMatchObject({ count: 1, regions: [], env: 'staging', dryRun: true });
    expectNoCspViolations(context);
    await context.close();
  });

  it('a workflow without variables takes a JSON object', async () => {
    const { context, page } = await signedIn();
    await openFromList(page, 'No variables');
    const input = page.getByLabel('Input (JSON)');
    expect(await input.inputValue()).toBe('{}');
    await accessibleAtBothWidths(page);
    await input.fill('["not", "an", "object"]');
    await submitted(page, 'Start run');
    expect(await page.locator('#input-error').textContent()).toBe('must be a JSON object');
    expect(await input.getAttribute('aria-invalid')).toBe('true');
    await accessibleAtBothWidths(page);
    expect(await runsOf(bareId)).toEqual([]);
    await input.fill('{"who": "ops", "n": 2}');
    await page.getByRole('button', { name: 'Start run' }).click();
    await page.waitForURL((u) => /^\/console\/runs\/ex_/.test(u.pathname));
    const result = await env.api(`/api/v1/executions/${(await until(runIdOf(page), ['SUCCEEDED'])).executionId}/result`);
    expect(result.body.output).toEqual({ who: 'ops', n: 2 });
    expectNoCspViolations(context);
    await context.close();
  });

  it("refuses a form without its CSRF token, and another account's workflow is a 404: nothing started", async () => {
    const other = await givenAccount();
    const foreign = await createWorkflow(
      { accountId: other.account.accountId, userId: other.admin.userId, role: 'admin' },
      {
        name: 'Not yours',
        definition: WorkflowDefinition.parse({ steps: [{ id: 'secret', type: 'set', values: {} }] }),
        recovery: false,
        editors: [],
      },
    );
    const { context, page } = await signedIn();
    const opened = await page.goto(`${env.url}/console/workflows/${foreign.workflowId}/run`);
    expect(opened?.status()).toBe(404);
    await page.goto(`${env.url}/console/workflows/${workflowId}/run`);
    await page.getByLabel('count (required)').fill('5');
    const before = (await runsOf(workflowId)).length;
    const statuses = await page.evaluate(async (foreignPath) => {
      const form = document.getElementById('run-form') as HTMLFormElement;
      const fields = new URLSearchParams(new FormData(form) as unknown as Record<string, string>);
      const noCsrf = new URLSearchParams(fields);
      noCsrf.delete('csrf');
      const a = await fetch(form.action, { method: 'POST', body: noCsrf });
      const b = await fetch(foreignPath, { method: 'POST', body: fields });
      return [a.status, b.status];
    }, `/console/workflows/${foreign.workflowId}/run`);
    expect(statuses).toEqual([403, 404]);
    expect((await runsOf(workflowId)).length).toBe(before);
    const foreignRuns = await env.api(`/api/v1/executions?workflowId=${foreign.workflowId}`, { auth: other.adminKey.token });
    expect(foreignRuns.body.items).toEqual([]);
    expectNoCspViolations(context);
    await context.close();
  });
});

describe('docs/first-workflow.md, followed as a newcomer would', { timeout: 240_000 }, () => {
  it('writes Orders in the editor, test-runs both samples, saves, starts a run from the form, decides it through Decide, and reads the run', async () => {
    const tutorial = readFileSync(join(import.meta.dirname, '../../docs/first-workflow.md'), 'utf8');
    const definition = /<!-- tutorial definition: start -->\s*```json\n([\s\S]*?)```/.exec(tutorial)?.[1] as string;
    const { context, page } = await signedIn();
    // 2. Write the workflow.
    await page.goto(`${env.url}/console/workflows`);
    await Promise.all([
      page.waitForURL((u) => u.pathname === '/console/workflows/new'),
      page.getByRole('link', { name: 'New workflow' }).click(),
    ]);
    await page.getByLabel('Name', { exact: true }).fill('Orders');
    await page.getByLabel('Definition', { exact: true }).fill(definition);
    await page.getByRole('region', { name: 'No errors: the definition is valid' }).waitFor();
    // 3. Try it before saving it: both samples, as the tutorial says they end.
    await page.getByLabel('Sample input (JSON)').fill('{"customer": "Ada", "amount": 20}');
    await page.getByRole('button', { name: 'Test run', exact: true }).click();
    await page.getByRole('region', { name: 'Test run: SUCCEEDED' }).waitFor();
    expect(await page.getByRole('img', { name: "Graph of the draft with the test run's path: greet, size, accept" }).count()).toBe(1);
    await page.getByLabel('Sample input (JSON)').fill('{"customer": "Ada", "amount": 500}');
    await page.getByRole('button', { name: 'Test run', exact: true }).click();
    const failed = page.getByRole('region', { name: 'Test run: FAILED' });
    await failed.waitFor();
    expect(await failed.textContent()).toContain('MOCK_MISSING');
    await Promise.all([
      page.waitForURL((u) => /^\/console\/workflows\/wf_[0-9a-z]+$/.test(u.pathname)),
      page.getByRole('button', { name: 'Save' }).click(),
    ]);
    // 4. Start a run from its page.
    await Promise.all([
      page.waitForURL((u) => u.pathname.endsWith('/run')),
      page.getByRole('link', { name: 'Run workflow' }).first().click(),
    ]);
    expect(await page.getByLabel('amount').inputValue()).toBe('20');
    await page.getByLabel('customer (required)').fill('Grace');
    await page.getByLabel('amount').fill('250');
    await Promise.all([
      page.waitForURL((u) => /^\/console\/runs\/ex_/.test(u.pathname)),
      page.getByRole('button', { name: 'Start run' }).click(),
    ]);
    const id = runIdOf(page);
    await until(id, ['WAITING_APPROVAL']);
    // 5. Decide.
    await page.reload();
    await Promise.all([
      page.waitForURL((u) => u.pathname.startsWith('/console/approvals/')),
      page.getByRole('link', { name: 'Decide' }).click(),
    ]);
    expect(await page.locator('main').textContent()).toContain('Accept the order of Grace (250 EUR)?');
    await page.getByRole('button', { name: 'Approve' }).click();
    await expect.poll(() => page.getByText('APPROVED').count()).toBeGreaterThan(0);
    // 6. Read the run: its path, in order, and the sections the tutorial names.
    expect((await until(id, ['SUCCEEDED', 'FAILED'])).status).toBe('SUCCEEDED');
    await page.goto(`${env.url}/console/runs/${id}`);
    const path = page.getByRole('list', { name: 'Steps the run went through, in order' });
    expect(await path.getByRole('listitem').allTextContents()).toEqual(['greet', 'size', 'approve', 'accept']);
    for (const heading of ['Timeline', 'Path', 'Inputs and result'])
      expect(await page.getByRole('heading', { name: heading, exact: true }).count()).toBe(1);
    // The timeline in Real time, Compressed a link away; each node of the graph names its status and links to the step.
    expect(await page.getByRole('link', { name: 'Real time' }).getAttribute('aria-current')).toBe('true');
    expect(await page.getByRole('link', { name: 'Compressed' }).count()).toBe(1);
    for (const step of ['greet', 'size', 'approve', 'accept'])
      expect(await page.getByRole('link', { name: `${step}: succeeded` }).getAttribute('href')).toBe(`#step-${step}`);
    await accessibleAtBothWidths(page);
    expectNoCspViolations(context);
    await context.close();
  });
});
