import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { givenAccount, PASSWORD } from '../support/fixtures.ts';
import { eventually } from '../support/engine.ts';
import {
  consoleContext,
  consoleStack,
  DESKTOP,
  expectAccessible,
  expectAccessibleAtBothWidths,
  expectNoCspViolations,
  PHONE,
  shot,
  signIn,
} from '../support/console-browser.ts';

/**
 * The overview and the runs list in a browser, over runs started through the API: the last day's
 * counts (table and per-hour chart), failures by code, what waits, the 7-day span, pending approvals
 * for me, failed runs with their codes; the list's
 * filters, pages, links, the XSS workflow name, another account's workflow, bad filters, and the live
 * refresh with "Pause updates".
 */

const XSS = '<img src=x onerror=alert(1)>';

let env: Awaited<ReturnType<typeof consoleStack>>;
let browser: Browser;
/** The runs started before the tests, by what they are for. */
const runs = {} as {
  quick: string[];
  rerun: string;
  failed: string;
  waiting: string;
  approvalId: string;
  /** A time between the first runs (the quick ones, before) and the others (after). */
  between: number;
};
let quickId: string;
let xssId: string;

const settled = (status: string) => !['PENDING', 'RUNNING'].includes(status);

async function waitFor(id: string, done: (status: string) => boolean = settled) {
  const r = await eventually(
    () => env.api(`/api/v1/executions/${id}`),
    (r) => done(r.body.status),
  );
  return r.body as { status: string; approvalId?: string };
}

async function startWorkflow(workflowId: string, variables: Record<string, unknown> = {}) {
  const r = await env.api(`/api/v1/workflows/${workflowId}/runs`, { json: { variables } });
  expect(r.status).toBe(202);
  return r.body.executionId as string;
}

async function startDemoByWebhook() {
  const r = await env.api(`/api/webhooks/${env.demo.webhookId}/trigger`, { json: { env: 'production' } });
  expect(r.status).toBe(200);
  return r.body.executionId as string;
}

async function login(email: string, password: string) {
  const r = await env.api('/api/auth/login', { json: { email, password }, auth: '' });
  expect(r.status).toBe(200);
  return r.body.token as string;
}

beforeAll(async () => {
  // Without the seed's waiting demo run: this file counts every run of its account.
  env = await consoleStack('console-runs', { demoRun: false });
  browser = env.browser;
  const session = await login(env.demo.adminEmail, env.demo.adminPassword);
  const quick = await env.api('/api/workflows', {
    auth: session,
    json: { name: 'Quick report', definition: { steps: [{ id: 'note', type: 'set', values: { done: true } }] } },
  });
  expect(quick.status).toBe(201);
  quickId = quick.body.id;
  const xss = await env.api('/api/workflows', {
    auth: session,
    json: { name: XSS, definition: { steps: [{ id: 'boom', type: 'fail', message: 'broken on purpose', code: 'BROKEN_ON_PURPOSE' }] } },
  });
  expect(xss.status).toBe(201);
  xssId = xss.body.id;

  runs.quick = [];
  for (let i = 0; i < 3; i++) runs.quick.push(await startWorkflow(quickId));
  for (const id of runs.quick) expect((await waitFor(id)).status).toBe('SUCCEEDED');
  // A whole second between the quick runs and the others: the time range test's boundary.
  await new Promise((r) => setTimeout(r, 1100));
  runs.between = Math.floor(Date.now() / 1000) * 1000;
  await new Promise((r) => setTimeout(r, 1100));

  runs.failed = await startWorkflow(xssId);
  expect((await waitFor(runs.failed)).status).toBe('FAILED');
  expect((await env.api(`/api/v1/executions/${runs.failed}/retry`, { json: {} })).status).toBe(202);
  const retried = await eventually(
    () => env.api(`/api/v1/executions/${runs.failed}`),
    (r) => r.body.status === 'FAILED' && r.body.retries === 1,
  );
  expect(retried.body.error.code).toBe('BROKEN_ON_PURPOSE');
  const rerun = await env.api(`/api/v1/executions/${runs.quick[0]}/rerun`, { json: {} });
  expect(rerun.status).toBe(202);
  runs.rerun = rerun.body.executionId;
  expect((await waitFor(runs.rerun)).status).toBe('SUCCEEDED');
  runs.waiting = await startDemoByWebhook();
  const waiting = await waitFor(runs.waiting, (s) => s === 'WAITING_APPROVAL');
  runs.approvalId = waiting.approvalId as string;
}, 120_000);
afterAll(async () => env?.stop());

/** A page that fails its test on any dialog (an injected `alert` would open one). */
async function signedInPage() {
  const context = await consoleContext(browser);
  const page = await context.newPage();
  page.on('dialog', (d) => {
    throw new Error(`a dialog opened: ${d.message()}`);
  });
  await page.goto(`${env.url}/console`);
  await signIn(page, env.url, env.demo.adminEmail, env.demo.adminPassword);
  return { context, page };
}

/** The run ids of the list's rows, in order (each row's link: the workflow's name, the run's id). */
const listed = async (page: Page) =>
  (await page.getByRole('table', { name: 'Runs, newest first' }).getByRole('link').allTextContents()).flatMap(
    (t) => t.match(/ex_\w+/) ?? [],
  );

/** Submit the filter form as a person does: choose, then "Filter". */
async function filter(page: Page, choose: (page: Page) => Promise<unknown>) {
  await choose(page);
  await Promise.all([page.waitForURL(/\/console\/runs\?/), page.getByRole('button', { name: 'Filter' }).click()]);
}

const fieldTime = (ms: number) => new Date(ms).toISOString().slice(0, 19);
/** What a datetime-local field holding `fieldTime(ms)` submits: HTML's shortest form, without `:00` seconds. */
const submittedTime = (ms: number) => fieldTime(ms).replace(/:00$/, '');

describe('the overview', () => {
  it('shows the last day counted by status (table and chart), the failures by code, what waits, and switches to 7 days', async () => {
    const { context, page } = await signedInPage();
    expect(new URL(page.url()).pathname).toBe('/console');
    const all = (await env.api('/api/v1/executions?limit=100')).body.items as { status: string }[];
    const expected = new Map<string, number>();
    for (const r of all) expected.set(r.status, (expected.get(r.status) ?? 0) + 1);
    expect(Object.fromEntries(expected)).toEqual({ SUCCEEDED: 4, FAILED: 1, WAITING_APPROVAL: 1 });

    // The counts are written by the functions that moved the runs, at their flush: a view may come a moment before it.
    const figures = page.getByRole('table', { name: 'Runs of the last 24 hours by status' });
    await eventually(
      async () => {
        await page.reload();
        return figures.getByRole('row', { name: 'Started 6' }).count();
      },
      (n) => n === 1,
    );
    for (const [status, n] of [
      ['SUCCEEDED', 4],
      ['FAILED', 1],
      ['CANCELLED', 0],
      ['INTERRUPTED', 0],
    ] as const) {
      const row = figures.getByRole('row', { name: `${status} ${n}` });
      expect(await row.count(), status).toBe(1);
      const href = await row.getByRole('link', { name: status }).getAttribute('href');
      expect(new URL(href ?? '', env.url).searchParams.get('status')).toBe(status);
    }

    const chart = page.getByRole('img', { name: /^Runs ended per hour in the last 24 hours: 5 in all/ });
    expect(await chart.isVisible()).toBe(true);
    const titles = await chart.evaluate((svg) => Array.from(svg.querySelectorAll('title'), (t) => t.textContent ?? ''));
    expect(titles).toHaveLength(24);
    expect(titles.filter((t) => !t.includes(': 0 runs started')).join(' ')).toMatch(/6 runs started; ended 4 succeeded, 1 failed/);
    // Its labels are text of the page (not of the SVG, which shrinks on a phone): 11 px at least.
    const sizes = await page
      .locator('.hours-chart p, .hours-chart figcaption')
      .evaluateAll((els) => els.map((e) => parseFloat(getComputedStyle(e).fontSize)));
    expect(sizes.every((px) => px >= 11)).toBe(true);

    const codes = page.getByRole('table', { name: /by error code/ });
    const code = codes.getByRole('row', { name: 'BROKEN_ON_PURPOSE 1' });
    expect(await code.count()).toBe(1);
    const codeHref = new URL((await code.getByRole('link').getAttribute('href')) ?? '', env.url);
    expect(codeHref.pathname).toBe('/console/runs');
    expect(codeHref.searchParams.get('status')).toBe('FAILED');

    const waiting = page.getByRole('region', { name: 'Waiting now' });
    expect(await waiting.getByRole('link', { name: 'Pending approvals: 1' }).getAttribute('href')).toBe('/console/approvals');

    const mine = page.getByRole('table', { name: 'Pending approvals for me, oldest first' });
    const approval = mine.getByRole('link', { name: 'Deploy to production' });
    expect(await approval.getAttribute('href')).toBe(`/console/approvals/${runs.approvalId}`);
    expect(await mine.getByRole('row').count()).toBe(2);

    const failed = page.getByRole('table', { name: 'Last failed runs, newest first' });
    const row = failed.getByRole('row', { name: new RegExp(runs.failed) });
    expect(await row.getByRole('link', { name: runs.failed }).getAttribute('href')).toBe(`/console/runs/${runs.failed}`);
    expect(await row.getByText('BROKEN_ON_PURPOSE').isVisible()).toBe(true);
    // The workflow's name is text, not markup.
    expect(await row.getByText(XSS, { exact: true }).isVisible()).toBe(true);
    expect(await page.locator('img[src="x"]').count()).toBe(0);

    await expectAccessible(page);
    await shot(page, 'overview-runs');
    await shot(page, 'overview-runs', 'dark');

    // The 7-day span: a link, the same figures over 168 hours.
    await Promise.all([page.waitForURL(/span=7d/), page.getByRole('link', { name: 'Last 7 days' }).click()]);
    expect(await page.getByRole('heading', { name: 'Runs in the last 7 days' }).isVisible()).toBe(true);
    expect(await page.getByRole('link', { name: 'Last 7 days' }).getAttribute('aria-current')).toBe('page');
    expect(
      await page.getByRole('table', { name: 'Runs of the last 7 days by status' }).getByRole('row', { name: 'Started 6' }).count(),
    ).toBe(1);
    expect(
      await page
        .getByRole('img', { name: /^Runs ended per hour in the last 7 days/ })
        .evaluate((svg) => svg.querySelectorAll('title').length),
    ).toBe(168);
    await expectAccessible(page);
    await shot(page, 'overview-runs-7d');

    // A phone's width: nothing wider than the screen, still accessible.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${env.url}/console`);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await expectAccessible(page);
    await shot(page, 'overview-runs-390');
    expectNoCspViolations(context);
    await context.close();
  }, 120_000);

  it('shows a member no approval of the admins', async () => {
    const member = `member-${Date.now()}@demo.local`;
    const session = await login(env.demo.adminEmail, env.demo.adminPassword);
    const created = await env.api('/api/members', { auth: session, json: { email: member, password: PASSWORD, role: 'member' } });
    expect(created.status).toBe(201);
    const context = await consoleContext(browser);
    const page = await context.newPage();
    await signIn(page, env.url, member, PASSWORD);
    expect(await page.getByText('No approval waits for you.').isVisible()).toBe(true);
    expect(await page.getByRole('link', { name: 'Deploy to production' }).count()).toBe(0);
    await context.close();
  });
});

describe('the runs list', () => {
  it('lists every run newest first; filters by workflow, status, trigger and time range', { timeout: 90_000 }, async () => {
    const { context, page } = await signedInPage();
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Runs', exact: true }).click();
    await page.waitForURL((u) => u.pathname === '/console/runs');
    const everyRun = [runs.waiting, runs.rerun, runs.failed, ...[...runs.quick].reverse()];
    expect(await listed(page)).toEqual(everyRun);
    // Scannable: the workflow's name first (the run's link, the id beneath it), a status mark beside
    // the status, when it started (relative; the UTC time in its title and beneath), and the total.
    expect(await page.getByRole('columnheader').allTextContents()).toEqual([
      'Workflow and run',
      'Status',
      'Started',
      'Duration',
      'Trigger',
    ]);
    expect(await page.getByText('6 runs', { exact: true }).isVisible()).toBe(true);
    const cells = page.getByRole('row', { name: new RegExp(runs.failed) }).getByRole('cell');
    expect(await cells.first().getByRole('link').textContent()).toBe(`${XSS} ${runs.failed}`);
    expect(await cells.nth(1).textContent()).toBe('✗\u00a0FAILED');
    const started = cells.nth(2).locator('time');
    expect(await started.textContent()).toMatch(/^(just now|\d+ s ago|\d+ min ago)$/);
    const absolute = await started.getAttribute('title');
    expect(absolute).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/);
    expect(
      await cells
        .nth(2)
        .getByText(absolute ?? '', { exact: true })
        .isVisible(),
    ).toBe(true);
    const row = page.getByRole('row', { name: new RegExp(runs.failed) });
    for (const text of [XSS, 'FAILED', 'api, retried 1×']) expect(await row.getByText(text, { exact: true }).count(), text).toBe(1);
    expect(await page.locator('img[src="x"]').count()).toBe(0);
    const rerunRow = page.getByRole('row', { name: new RegExp(runs.rerun) });
    expect(await rerunRow.getByText('Quick report', { exact: true }).count()).toBe(1);
    expect(await rerunRow.getByRole('cell', { name: 'rerun', exact: true }).count()).toBe(1);
    expect(await rerunRow.getByRole('cell', { name: /^\d+ (ms|s)$/ }).count()).toBe(1);
    await expectAccessible(page);
    await shot(page, 'runs');
    await shot(page, 'runs', 'dark');

    await filter(page, (p) => p.getByLabel('Workflow').selectOption({ label: 'Quick report' }));
    expect(new URL(page.url()).searchParams.get('workflowId')).toBe(quickId);
    expect(await listed(page)).toEqual([runs.rerun, ...[...runs.quick].reverse()]);
    expect(await page.getByLabel('Workflow').inputValue()).toBe(quickId);

    await filter(page, (p) =>
      p
        .getByLabel('Workflow')
        .selectOption({ label: 'All workflows' })
        .then(() => p.getByLabel('Status').selectOption('FAILED')),
    );
    expect(await listed(page)).toEqual([runs.failed]);

    await filter(page, (p) =>
      p
        .getByLabel('Status')
        .selectOption({ label: 'Any status' })
        .then(() => p.getByLabel('Trigger').selectOption('webhook')),
    );
    expect(await listed(page)).toEqual([runs.waiting]);
    await filter(page, (p) => p.getByLabel('Trigger').selectOption('retry'));
    expect(await listed(page)).toEqual([runs.failed]);
    await filter(page, (p) => p.getByLabel('Trigger').selectOption('rerun'));
    expect(await listed(page)).toEqual([runs.rerun]);
    await filter(page, (p) => p.getByLabel('Trigger').selectOption('schedule'));
    expect(await listed(page)).toEqual([]);
    expect(await page.getByText('No runs match these filters.').isVisible()).toBe(true);

    // The time range: up to the boundary the quick runs, from it the others (datetime-local fields, UTC).
    await filter(page, async (p) => {
      await p.getByLabel('Trigger').selectOption({ label: 'Any trigger' });
      await p.getByLabel('To (UTC)').fill(fieldTime(runs.between));
    });
    expect(await listed(page)).toEqual([...runs.quick].reverse());
    expect(new URL(page.url()).searchParams.get('to')).toBe(submittedTime(runs.between));
    await filter(page, async (p) => {
      await p.getByLabel('To (UTC)').fill('');
      await p.getByLabel('From (UTC)').fill(fieldTime(runs.between));
    });
    expect(await listed(page)).toEqual([runs.waiting, runs.rerun, runs.failed]);
    // Both ends and a status; the URL is a bookmark of the same list.
    await filter(page, async (p) => {
      await p.getByLabel('To (UTC)').fill(fieldTime(Date.now() + 60_000));
      await p.getByLabel('Status').selectOption('SUCCEEDED');
    });
    expect(await listed(page)).toEqual([runs.rerun]);
    await expectAccessible(page);
    await shot(page, 'runs-filtered');
    const bookmark = page.url();
    const again = await context.newPage();
    await again.goto(bookmark);
    expect(await listed(again)).toEqual([runs.rerun]);
    // ISO times with a zone, as a script writes them.
    await again.goto(`${env.url}/console/runs?from=${new Date(runs.between).toISOString()}&trigger=api`);
    expect(await listed(again)).toEqual([runs.failed]);

    await page.getByRole('link', { name: 'Clear filters' }).click();
    await page.waitForURL((u) => u.pathname === '/console/runs' && u.search === '');
    expect(await listed(page)).toEqual(everyRun);

    // Back and reload show the URL's filters in the form, not what was chosen on the page before leaving it.
    await filter(page, (p) => p.getByLabel('Status').selectOption('FAILED'));
    await page.getByLabel('Status').selectOption('SUCCEEDED');
    await Promise.all([page.waitForURL(/status=SUCCEEDED/), page.getByRole('button', { name: 'Filter' }).click()]);
    expect(await listed(page)).toEqual([runs.rerun, ...[...runs.quick].reverse()]);
    await page.goBack();
    expect(new URL(page.url()).searchParams.get('status')).toBe('FAILED');
    expect(await page.getByLabel('Status').inputValue()).toBe('FAILED');
    expect(await listed(page)).toEqual([runs.failed]);
    await page.goForward();
    expect(await page.getByLabel('Status').inputValue()).toBe('SUCCEEDED');
    await page.reload();
    expect(await page.getByLabel('Status').inputValue()).toBe('SUCCEEDED');
    expectNoCspViolations(context);
    await context.close();
  });

  it('pages with "Next page" and "Previous page", says how many, keeps a filtered page full, fits a phone', {
    timeout: 60_000,
  }, async () => {
    const { context, page } = await signedInPage();
    await page.goto(`${env.url}/console/runs?limit=2`);
    const pager = page.getByRole('navigation', { name: 'Pages of runs' });
    const seen: string[][] = [];
    const summaries: string[] = [];
    for (;;) {
      seen.push(await listed(page));
      summaries.push((await page.locator('#runs-summary').textContent()) ?? '');
      const next = pager.getByRole('link', { name: 'Next page' });
      if ((await next.count()) === 0) break;
      await Promise.all([page.waitForURL(/cursor=/), next.click()]);
      expect(seen.length).toBeLessThan(10);
    }
    expect(seen.map((p) => p.length)).toEqual([2, 2, 2]);
    expect(seen.flat()).toEqual([runs.waiting, runs.rerun, runs.failed, ...[...runs.quick].reverse()]);
    expect(summaries).toEqual(['Runs 1–2 of more than 2', 'Runs 3–4 of more than 4', 'Runs 5–6 of 6']);
    // Previous, then Previous: the first page again, without a cursor.
    await Promise.all([page.waitForURL(/cursor=/), pager.getByRole('link', { name: 'Previous page' }).click()]);
    expect(await listed(page)).toEqual(seen[1]);
    await Promise.all([page.waitForURL((u) => !u.search.includes('cursor=')), pager.getByRole('link', { name: 'Previous page' }).click()]);
    expect(await listed(page)).toEqual(seen[0]);
    expect(await pager.getByRole('link', { name: 'Previous page' }).count()).toBe(0);

    // A filtered list: full pages of matches (4 succeeded among the 6), the total on its last.
    await page.goto(`${env.url}/console/runs?limit=2&status=SUCCEEDED`);
    expect(await listed(page)).toEqual([runs.rerun, runs.quick[2]]);
    expect(await page.locator('#runs-summary').textContent()).toBe('Matching runs 1–2 of more than 2');
    await Promise.all([page.waitForURL(/cursor=/), pager.getByRole('link', { name: 'Next page' }).click()]);
    expect(await listed(page)).toEqual([runs.quick[1], runs.quick[0]]);
    expect(await page.locator('#runs-summary').textContent()).toBe('Matching runs 3–4 of 4');
    await shot(page, 'runs-paged');
    expect(await pager.getByRole('link', { name: 'Next page' }).count()).toBe(0);
    expect(await page.getByLabel('Status').inputValue()).toBe('SUCCEEDED');

    // A phone: the workflow and the status in every row, nothing wider than the screen.
    await page.goto(`${env.url}/console/runs`);
    await page.setViewportSize(PHONE);
    expect(await page.getByRole('columnheader', { name: 'Status' }).isVisible()).toBe(true);
    expect(
      await page
        .getByRole('row', { name: new RegExp(runs.failed) })
        .getByText('FAILED', { exact: true })
        .isVisible(),
    ).toBe(true);
    expect(
      await page
        .getByRole('row', { name: new RegExp(runs.rerun) })
        .getByText('Quick report', { exact: true })
        .isVisible(),
    ).toBe(true);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(PHONE.width);
    await page.setViewportSize(DESKTOP);
    await expectAccessibleAtBothWidths(page, 'runs-list');

    await Promise.all([page.waitForURL(/\/console\/runs\/ex_/), page.getByRole('link', { name: new RegExp(runs.failed) }).click()]);
    expect(new URL(page.url()).pathname).toBe(`/console/runs/${runs.failed}`);
    expectNoCspViolations(context);
    await context.close();
  });

  it("shows nothing of another account's workflow; a wrong filter is shown at its field (400)", { timeout: 60_000 }, async () => {
    const other = await givenAccount();
    const otherSession = await login(other.admin.email, PASSWORD);
    const theirs = await env.api('/api/workflows', {
      auth: otherSession,
      json: { name: 'Their secret workflow', definition: { steps: [{ id: 'x', type: 'set', values: { a: 1 } }] } },
    });
    expect(theirs.status).toBe(201);
    const theirRun = await env.api(`/api/v1/workflows/${theirs.body.id}/runs`, { json: {}, auth: other.adminKey.token });
    expect(theirRun.status).toBe(202);

    const { context, page } = await signedInPage();
    const res = await page.goto(`${env.url}/console/runs?workflowId=${theirs.body.id}`);
    expect(res?.status()).toBe(200);
    expect(await listed(page)).toEqual([]);
    expect(await page.getByText('No runs match these filters.').isVisible()).toBe(true);
    const html = await page.content();
    expect(html).not.toContain(theirRun.body.executionId);
    expect(html).not.toContain('Their secret workflow');
    await page.goto(`${env.url}/console/runs`);
    expect(await page.content()).not.toContain(theirRun.body.executionId);

    // A wrong filter: the page with its form, the field marked and its error beneath it, no rows (400).
    for (const [bad, field] of [
      ['status=NOPE', 'Status'],
      ['trigger=cron', 'Trigger'],
      ['from=yesterday', 'From (UTC)'],
      ['to=2026-13-45T99:99', 'To (UTC)'],
      [`from=2026-11-27T10:00:00Z&to=2026-11-27T09:00:00Z`, 'To (UTC)'],
      ['workflowId=..%2F..%2Fetc', 'Workflow'],
      ['workflowId=%3Cimg%20src%3Dx%3E', 'Workflow'],
      ['limit=0', undefined],
      ['limit=1000', undefined],
      ['cursor=not-a-cursor', undefined],
      ['live=maybe', undefined],
    ] as const) {
      const r = await page.goto(`${env.url}/console/runs?${bad}`);
      expect(r?.status(), bad).toBe(400);
      expect(await page.getByRole('heading', { level: 1 }).textContent(), bad).toBe('Runs');
      expect(await page.getByRole('form', { name: 'Filter runs' }).count(), bad).toBe(1);
      expect(await page.getByRole('table', { name: 'Runs, newest first' }).count(), bad).toBe(0);
      expect(await page.getByRole('alert').count(), bad).toBe(1);
      const invalid = page.locator('[aria-invalid="true"]');
      if (field) {
        expect(await invalid.count(), bad).toBe(1);
        expect(await page.getByLabel(field).getAttribute('aria-invalid'), bad).toBe('true');
        const described = (await page.getByLabel(field).getAttribute('aria-describedby')) ?? '';
        expect(await page.locator(`#${described}`).textContent(), bad).toMatch(/\S/);
      } else expect(await invalid.count(), bad).toBe(0);
    }
    expect(await page.locator('img[src="x"]').count()).toBe(0);
    // The error says what the link said and why it is wrong; the field shows the list's choice.
    await page.goto(`${env.url}/console/runs?status=NOPE`);
    expect(await page.getByText('“NOPE”: not a status; choose one of the list').isVisible()).toBe(true);
    expect(await page.getByLabel('Status').inputValue()).toBe('');
    await expectAccessibleAtBothWidths(page);
    await shot(page, 'runs-bad-filter');
    expectNoCspViolations(context);
    await context.close();
  });

  it('refreshes itself while a listed run is active; "Pause updates" stops it, "Resume updates" goes on', { timeout: 90_000 }, async () => {
    const { context, page } = await signedInPage();
    const id = await startDemoByWebhook();
    const { approvalId } = await waitFor(id, (s) => s === 'WAITING_APPROVAL');
    await page.goto(`${env.url}/console/runs?trigger=webhook`);
    const row = page.getByRole('row', { name: new RegExp(id) });
    expect(await row.getByText('WAITING_APPROVAL', { exact: true }).count()).toBe(1);
    expect(await page.getByRole('link', { name: 'Pause updates' }).isVisible()).toBe(true);
    await expectAccessible(page);
    let navigations = 0;
    page.on('framenavigated', (f) => {
      if (f === page.mainFrame()) navigations++;
    });

    const approved = await env.api(`/api/v1/approvals/${approvalId}/approve`, { json: { formData: { ticket: 'T-1' } } });
    expect(approved.status).toBe(200);
    expect((await waitFor(id)).status).toBe('SUCCEEDED');
    await expect.poll(() => row.getByText('SUCCEEDED', { exact: true }).count(), { timeout: 15_000 }).toBe(1);
    expect(navigations).toBe(0);
    // The other webhook run still waits: the list goes on refreshing while it does.
    expect(await page.getByRole('link', { name: 'Pause updates' }).isVisible()).toBe(true);

    // Paused: the list stays as it was, and asks for nothing.
    const second = await startDemoByWebhook();
    const { approvalId: secondApproval } = await waitFor(second, (s) => s === 'WAITING_APPROVAL');
    await page.reload();
    const secondRow = page.getByRole('row', { name: new RegExp(second) });
    expect(await secondRow.getByText('WAITING_APPROVAL', { exact: true }).count()).toBe(1);
    await Promise.all([page.waitForURL(/live=0/), page.getByRole('link', { name: 'Pause updates' }).click()]);
    expect(await page.getByRole('link', { name: 'Resume updates' }).isVisible()).toBe(true);
    await expectAccessible(page);
    await shot(page, 'runs-paused');
    let asked = 0;
    page.on('request', (r) => {
      if (new URL(r.url()).pathname === '/console/runs') asked++;
    });
    expect((await env.api(`/api/v1/approvals/${secondApproval}/approve`, { json: { formData: { ticket: 'T-2' } } })).status).toBe(200);
    expect((await waitFor(second)).status).toBe('SUCCEEDED');
    await page.waitForTimeout(7_000);
    expect(asked).toBe(0);
    expect(await secondRow.getByText('WAITING_APPROVAL', { exact: true }).count()).toBe(1);

    await Promise.all([page.waitForURL((u) => !u.search.includes('live=0')), page.getByRole('link', { name: 'Resume updates' }).click()]);
    expect(
      await page
        .getByRole('row', { name: new RegExp(second) })
        .getByText('SUCCEEDED', { exact: true })
        .count(),
    ).toBe(1);
    expectNoCspViolations(context);
    await context.close();
  });
});
