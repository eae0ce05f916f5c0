import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorkflow } from '../../shared/domain/workflows.ts';
import { WorkflowDefinition } from '../../shared/engine/definition.ts';
import { consoleContext, consoleStack, expectAccessible, expectNoCspViolations, shot, signIn } from '../support/console-browser.ts';
import { givenAccount, uniqueEmail } from '../support/fixtures.ts';

/**
 * The console's workflow pages in a browser (issue 33): the list (cursor pages), a workflow's page
 * (its graph, JSON, versions, webhooks, schedules, recent runs), a definition with every kind of
 * control flow drawn as a graph, a hostile workflow name shown as text, another account's workflow
 * answered like an unknown one, and what a member sees. Every page: axe (WCAG 2.1 A/AA), no CSP
 * violation, screenshots light and dark.
 */

let env: Awaited<ReturnType<typeof consoleStack>>;
let browser: Browser;
/** The demo admin's API session (`POST /api/auth/login`): what the console's API takes. */
let token: string;

const XSS = '<img src=x onerror=alert(1)>';

/** Every control-flow construct: order, next, a switch's cases and default, onError, a loop with its body. */
const BRANCHING = {
  variables: { env: { type: 'string', default: 'staging' }, amount: { type: 'number', default: 5 } },
  steps: [
    { id: 'prepare', type: 'set', values: { checklist: Array.from({ length: 40 }, (_, i) => `check item ${i + 1}`) } },
    {
      id: 'route',
      type: 'switch',
      cases: [
        { when: '{% $vars.amount > 100 %}', next: 'guard' },
        { when: "{% $vars.env = 'staging' %}", next: 'regions' },
      ],
      default: 'done',
    },
    {
      id: 'regions',
      type: 'for_each',
      items: "{% ['eu', 'us'] %}",
      onError: { next: 'recover' },
      steps: [
        { id: 'ping', type: 'set', values: { region: '{% $item %}' }, onError: 'continue' },
        { id: 'check', type: 'switch', cases: [{ when: '{% $item = "eu" %}', next: 'log' }], default: '$end' },
        { id: 'log', type: 'set', values: { seen: '{% $item %}' } },
      ],
    },
    { id: 'done', type: 'set', values: { ok: true }, next: '$end' },
    { id: 'recover', type: 'set', values: { ok: false } },
    { id: 'guard', type: 'fail', message: 'Too large', code: 'TOO_LARGE', when: '{% $vars.amount > 100 %}' },
  ],
  output: "{% { 'marker': 'END-OF-DEFINITION' } %}",
};
const STEP_IDS = ['prepare', 'route', 'regions', 'ping', 'check', 'log', 'done', 'recover', 'guard'];

async function api(path: string, init: { method?: string; json?: unknown; auth?: string } = {}) {
  return env.api(path, { auth: token, ...init });
}

/** A context signed in as the demo admin (or `as`), recording CSP violations. */
async function signedIn(as?: { email: string; password: string }): Promise<{ context: BrowserContext; page: Page }> {
  const context = await consoleContext(browser);
  const page = await context.newPage();
  // No page may open a dialog (a script that ran from data would).
  page.on('dialog', (d) => {
    throw new Error(`a dialog opened: ${d.message()}`);
  });
  await signIn(page, env.url, as?.email ?? env.demo.adminEmail, as?.password ?? env.demo.adminPassword);
  return { context, page };
}

/** The text of a table row's cells (its row header apart). */
const cells = (row: Locator) => row.getByRole('cell').allTextContents();

/** Both colour schemes, full page. */
async function shots(page: Page, name: string) {
  await shot(page, name, 'light');
  await shot(page, name, 'dark');
  await page.emulateMedia({ colorScheme: 'light' });
}

let branching: { id: string };
let xss: { id: string };
let executionId: string;
beforeAll(async () => {
  env = await consoleStack('console-workflows');
  browser = env.browser;
  const login = await env.api('/api/auth/login', { json: { email: env.demo.adminEmail, password: env.demo.adminPassword } });
  expect(login.status, JSON.stringify(login.body)).toBe(200);
  token = login.body.token;
  expect(WorkflowDefinition.safeParse(BRANCHING).error?.issues).toBeUndefined();
  // Version 1 without the `audit` step, version 2 (current) with it.
  const created = await api('/api/workflows', {
    json: { name: 'Branching', description: 'Every kind of control flow', definition: { ...BRANCHING, steps: BRANCHING.steps } },
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  branching = created.body;
  const withAudit = { ...BRANCHING, steps: [...BRANCHING.steps, { id: 'audit', type: 'set', values: { audited: true } }] };
  const updated = await api(`/api/workflows/${branching.id}`, { method: 'PUT', json: { definition: withAudit } });
  expect(updated.status, JSON.stringify(updated.body)).toBe(200);
  const schedule = await api(`/api/workflows/${branching.id}/schedules`, {
    json: { name: 'nightly', expression: 'cron(0 3 * * ? *)', timezone: 'Europe/Paris' },
  });
  expect(schedule.status, JSON.stringify(schedule.body)).toBe(201);
  const hostile = await api('/api/workflows', {
    json: { name: XSS, description: XSS, definition: { steps: [{ id: 'only', type: 'set', values: {} }] } },
  });
  expect(hostile.status, JSON.stringify(hostile.body)).toBe(201);
  xss = hostile.body;
  // A run of the demo workflow (it waits for its approval).
  const run = await env.api(`/api/v1/workflows/${env.demo.workflowId}/runs`, { json: { variables: { env: 'staging' } } });
  expect(run.status, JSON.stringify(run.body)).toBe(202);
  executionId = run.body.executionId;
});
afterAll(async () => env?.stop());

describe('the workflows list', () => {
  it('lists the workflows, each linking to its page, a page at a time ("Next page")', async () => {
    // 25 a page: with the demo's, Branching and the hostile one, 24 more make two pages.
    for (let i = 0; i < 24; i++) {
      const res = await api('/api/workflows', {
        json: { name: `filler ${String(i).padStart(2, '0')}`, definition: { steps: [{ id: 's', type: 'set', values: {} }] } },
      });
      expect(res.status).toBe(201);
    }
    const { context, page } = await signedIn();
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Workflows', exact: true }).click();
    await page.waitForURL((u) => u.pathname === '/console/workflows');
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Workflows');
    expect(
      await page
        .getByRole('navigation', { name: 'Console' })
        .getByRole('link', { name: 'Workflows', exact: true })
        .getAttribute('aria-current'),
    ).toBe('page');
    const table = page.getByRole('table', { name: 'Workflows, newest first' });
    expect(await table.getByRole('columnheader').allTextContents()).toEqual(['Name', 'Id', 'Version', 'Updated', 'Description', 'Actions']);
    const first = await table.getByRole('row').count();
    expect(first).toBe(26); // the header and 25
    await expectAccessible(page);
    await shots(page, 'workflows');

    const names = async () => (await table.getByRole('row').allTextContents()).slice(1);
    const pageOne = await names();
    await page.getByRole('link', { name: 'Next page' }).click();
    await page.waitForURL((u) => u.searchParams.has('cursor'));
    const pageTwo = await names();
    expect(pageTwo.length).toBe(2);
    expect(pageTwo.some((r) => pageOne.includes(r))).toBe(false);
    const all = [...pageOne, ...pageTwo].join('\n');
    for (const name of ['Deploy with approval', 'Branching', XSS, 'filler 00', 'filler 23']) expect(all).toContain(name);
    expect(await page.getByRole('link', { name: 'Next page' }).count()).toBe(0);
    await expectAccessible(page);

    // Each row links to its workflow's page.
    const demo = page.getByRole('link', { name: 'Deploy with approval', exact: true });
    expect(await demo.getAttribute('href')).toBe(`/console/workflows/${env.demo.workflowId}`);
    await demo.click();
    await page.waitForURL((u) => u.pathname === `/console/workflows/${env.demo.workflowId}`);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Deploy with approval');
    expectNoCspViolations(context);
    await context.close();
  });
});

describe("a workflow's page", () => {
  it('the demo: its facts, its graph, its JSON, its version, its webhook, no schedule, its recent run', async () => {
    const { context, page } = await signedIn();
    await page.goto(`${env.url}/console/workflows/${env.demo.workflowId}`);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Deploy with approval');
    const main = page.getByRole('main');
    expect(await main.textContent()).toContain('Demo: set → manual_approval (mailed to the admins) → artifact');
    const graph = page.getByRole('img', { name: 'Graph of Deploy with approval, version 1' });
    expect(await graph.isVisible()).toBe(true);
    for (const id of ['prepare', 'approve', 'report', 'Start', 'End'])
      expect(await graph.getByText(id, { exact: true }).isVisible(), id).toBe(true);
    expect(await page.getByRole('region', { name: 'Definition of version 1 as JSON' }).textContent()).toContain(
      '"type": "manual_approval"',
    );

    const versions = page.getByRole('table', { name: 'Versions, newest first' });
    expect(await versions.getByRole('columnheader').allTextContents()).toEqual(['Version', 'Saved', 'By']);
    expect(await versions.getByRole('row').count()).toBe(2);
    expect(await cells(versions.getByRole('row').nth(1))).toEqual([
      'Version 1 (current)',
      expect.stringMatching(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/),
      env.demo.adminEmail,
    ]);
    const hooks = page.getByRole('table', { name: 'Webhooks that start this workflow' });
    expect(await cells(hooks.getByRole('row').nth(1))).toEqual([
      'Demo deploy hook',
      expect.stringMatching(/^wh_\w+$/),
      'Enabled',
      'api_key',
    ]);
    expect(await page.getByRole('region', { name: 'Schedules' }).textContent()).toContain('No schedules start this workflow.');
    const run = page.getByRole('link', { name: executionId });
    expect(await run.getAttribute('href')).toBe(`/console/runs/${executionId}`);
    expect(await page.getByRole('table', { name: 'Recent runs of this workflow, newest first' }).textContent()).toMatch(
      /WAITING_APPROVAL|PENDING|RUNNING/,
    );
    expect(await page.getByRole('link', { name: 'These runs in the runs list' }).getAttribute('href')).toBe(
      `/console/runs?workflowId=${env.demo.workflowId}`,
    );
    await expectAccessible(page);
    await shots(page, 'workflow-demo');
    expectNoCspViolations(context);
    await context.close();
  });

  it('a definition with switch, for_each and onError: a graph whose nodes are the step ids, the table, versions, a schedule, the JSON in full', async () => {
    const { context, page } = await signedIn();
    await page.goto(`${env.url}/console/workflows/${branching.id}`);
    const graph = page.getByRole('img', { name: 'Graph of Branching, version 2' });
    for (const id of [...STEP_IDS, 'audit']) expect(await graph.getByText(id, { exact: true }).isVisible(), id).toBe(true);
    for (const label of [
      'case 1',
      'case 2',
      'default',
      'each item',
      'next item',
      'all items done',
      'on error',
      'also on error',
      'skipped',
      'for_each regions',
    ])
      expect(await graph.getByText(label, { exact: true }).first().isVisible(), label).toBe(true);

    // The same facts as a table, behind a disclosure.
    await page.getByText('The graph as a table').click();
    const steps = page.getByRole('table', { name: 'Steps of version 2 and where a run goes from each' });
    expect(await steps.getByRole('rowheader').allTextContents()).toEqual(['Start', ...STEP_IDS, 'audit']);
    expect(await cells(steps.getByRole('row', { name: /^route/ }))).toEqual([
      'switch',
      '',
      "guard (case 1: $vars.amount > 100) · regions (case 2: $vars.env = 'staging') · done (default)",
    ]);
    expect(await cells(steps.getByRole('row', { name: /^log/ }))).toEqual(['set', 'regions', 'regions (next item)']);

    const schedules = page.getByRole('table', { name: 'Schedules that start this workflow' });
    expect(await cells(schedules.getByRole('row').nth(1))).toEqual([
      'nightly',
      'cron(0 3 * * ? *)',
      'Europe/Paris',
      'Enabled',
      expect.stringMatching(/^\d{4}-\d\d-\d\dT03:00:00\+0[12]:00$/),
    ]);
    expect(await page.getByRole('region', { name: 'Recent runs' }).textContent()).toContain('No runs yet.');
    await expectAccessible(page);
    await shots(page, 'workflow-branching');

    // The JSON is cut; "Show all" loads the rest in place.
    const json = page.getByRole('region', { name: 'Definition of version 2 as JSON' });
    expect(await json.textContent()).not.toContain('END-OF-DEFINITION');
    await json.getByRole('link', { name: 'Show all' }).click();
    await expect.poll(async () => (await page.getByText(/END-OF-DEFINITION/).count()) > 0).toBe(true);
    expect(await page.getByText(/"id": "audit"/).count()).toBe(1);

    // Version 1: its own graph (no audit step yet), said to be an older one.
    await page.goto(`${env.url}/console/workflows/${branching.id}`);
    const versions = page.getByRole('table', { name: 'Versions, newest first' });
    expect(await versions.getByRole('row').count()).toBe(3);
    await versions.getByRole('link', { name: 'Version 1' }).click();
    await page.waitForURL((u) => u.searchParams.get('version') === '1');
    expect(await page.getByRole('status').textContent()).toContain('This is version 1, not the current one.');
    const old = page.getByRole('img', { name: 'Graph of Branching, version 1' });
    expect(await old.getByText('regions', { exact: true }).isVisible()).toBe(true);
    expect(await old.getByText('audit', { exact: true }).count()).toBe(0);
    await expectAccessible(page);
    await page.getByRole('link', { name: 'Show the current version (2)' }).click();
    await page.waitForURL((u) => !u.searchParams.has('version'));
    expectNoCspViolations(context);
    await context.close();
  });

  it('shows a workflow named like markup as text, in the list and on its page: no element, no script', async () => {
    const { context, page } = await signedIn();
    await page.goto(`${env.url}/console/workflows`);
    const link = page.getByRole('link', { name: XSS, exact: true });
    expect(await link.isVisible()).toBe(true);
    expect(await page.getByRole('main').locator('img').count()).toBe(0);
    await link.click();
    await page.waitForURL((u) => u.pathname === `/console/workflows/${xss.id}`);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe(XSS);
    expect(await page.title()).toBe(`${XSS} · Flowgate`);
    expect(await page.getByRole('img', { name: `Graph of ${XSS}, version 1` }).isVisible()).toBe(true);
    expect(await page.locator('img').count()).toBe(0);
    await expectAccessible(page);
    await shot(page, 'workflow-xss');
    expectNoCspViolations(context);
    await context.close();
  });

  it("another account's workflow is the same 404 page as an unknown one", async () => {
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
    const seen = async (id: string) => {
      const res = await page.goto(`${env.url}/console/workflows/${id}`);
      const text = ((await page.getByRole('main').textContent()) ?? '').replaceAll(id, '<id>').replace(/Request \S+/, 'Request <request>');
      return { status: res?.status(), title: await page.title(), text };
    };
    const unknown = await seen('wf_00000000000000000000000000');
    const theirs = await seen(foreign.workflowId);
    expect(unknown.status).toBe(404);
    expect(theirs).toEqual(unknown);
    expect(theirs.text).not.toContain('Not yours');
    expect(await page.getByRole('navigation', { name: 'Console' }).isVisible()).toBe(true);
    await expectAccessible(page);
    await shot(page, 'workflow-404');
    // Nor any version of it.
    expect((await seen(`${foreign.workflowId}?version=1`)).status).toBe(404);
    // An unknown version of one's own is a 404 too.
    const res = await page.goto(`${env.url}/console/workflows/${branching.id}?version=9`);
    expect(res?.status()).toBe(404);
    expect((await page.getByRole('main').textContent()) ?? '').toContain(`Workflow ${branching.id} has no version 9.`);
    expectNoCspViolations(context);
    await context.close();
  });

  it('a member sees the workflows, and only the webhooks they created (as the API shows them)', async () => {
    const member = { email: uniqueEmail('member'), password: 'member password 123' };
    const created = await api('/api/members', { json: { ...member, role: 'member' } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const { context, page } = await signedIn(member);
    await page.goto(`${env.url}/console/workflows/${env.demo.workflowId}`);
    expect(await page.getByRole('img', { name: 'Graph of Deploy with approval, version 1' }).isVisible()).toBe(true);
    const hooks = page.getByRole('region', { name: 'Webhooks' });
    expect(await hooks.textContent()).toContain('Members see the webhooks they created.');
    expect(await hooks.textContent()).toContain('No webhooks start this workflow.');
    expect(await hooks.textContent()).not.toContain('Demo deploy hook');
    await expectAccessible(page);
    expectNoCspViolations(context);
    await context.close();
  });
});
