import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consoleContext, consoleStack, expectAccessible, expectNoCspViolations, shot, signIn } from '../support/console-browser.ts';
import { givenAccount, PASSWORD } from '../support/fixtures.ts';

/**
 * The console's schedules pages in a browser: the list with the plan's count ("N of 5 schedules" on
 * the Pro plan), "Create schedule" with its preview of the next five fire times across a DST change
 * (without scripts: the "Preview" button keeps what was typed; with them: as you type), each error at
 * its field, "Run now", "Pause"/"Resume", "Delete" with its confirmation, the plan's limit, and another
 * account's ids answered 404. Every page: axe (WCAG 2.1 A/AA) and no CSP violation.
 */

let env: Awaited<ReturnType<typeof consoleStack>>;
let browser: Browser;
let pro: Awaited<ReturnType<typeof givenAccount>>;
/** The Pro account's admin's API session, and its workflow. */
let token: string;
let workflowId: string;
/** A schedule and a workflow of the demo account (another account's ids). */
let foreignScheduleId: string;

const ZONE = 'Europe/Berlin';

/** The live preview swapped in and settled (htmx marks new content while it settles, then binds its triggers). */
const settled = (page: Page) =>
  page.waitForFunction(() => !document.querySelector('.htmx-added, .htmx-settling, .htmx-swapping, .htmx-request'));

/** The zone's wall clock at an instant, `YYYY-MM-DD HH:MM`, by Intl alone (not the scheduler's code). */
const wall = (ms: number) => {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-US', {
      timeZone: ZONE,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
    })
      .formatToParts(ms)
      .map((p) => [p.type, p.value]),
  );
  return `${parts.year}-${parts.month}-${parts.day} ${parts.hour}:${parts.minute}`;
};

/**
 * 02:30 every day in Berlin from 2027-03-26, as the scheduler's documented rule has it: a day whose
 * 02:30 does not exist (clocks spring forward on the last Sunday of March, 2027-03-28) has no fire.
 * Computed here with Intl: a day's 02:30 exists when an instant an hour or two before 02:30 UTC shows it.
 */
function expectedFires(count: number): string[] {
  const out: string[] = [];
  for (let day = 0; out.length < count; day++) {
    const d = new Date(Date.UTC(2027, 2, 26 + day, 2, 30));
    const want = `${d.toISOString().slice(0, 10)} 02:30`;
    if ([1, 2].some((h) => wall(d.getTime() - h * 3_600_000) === want)) out.push(want);
  }
  return out;
}

async function api(path: string, json?: unknown, method?: string) {
  return env.api(path, { auth: token, json, method });
}

async function signedIn(opts: Parameters<typeof consoleContext>[1] = {}): Promise<{ context: BrowserContext; page: Page }> {
  const context = await consoleContext(browser, opts);
  context.setDefaultTimeout(10_000);
  const page = await context.newPage();
  await signIn(page, env.url, pro.admin.email, PASSWORD);
  return { context, page };
}

/** The page's main text. */
const mainText = (page: Page) => page.locator('main').textContent();

/** The five fire times the preview lists. */
const previewTimes = (page: Page) => page.locator('#schedule-preview ol li').allTextContents();

/** Press a form's submit button and wait for the page its POST answers with (the URL may stay the same). */
async function submitted(page: Page, button: ReturnType<Page['getByRole']>) {
  // The navigation the POST starts, committed and loaded (not the page it leaves).
  await Promise.all([page.waitForNavigation({ waitUntil: 'load' }), button.click()]);
}

beforeAll(async () => {
  env = await consoleStack('console-schedules');
  browser = env.browser;
  pro = await givenAccount({ plan: 'pro' });
  const login = await env.api('/api/auth/login', { json: { email: pro.admin.email, password: PASSWORD } });
  expect(login.status, JSON.stringify(login.body)).toBe(200);
  token = login.body.token;
  const wf = await api('/api/workflows', {
    name: 'Nightly report',
    definition: { variables: { env: { type: 'string', default: 'staging' } }, steps: [{ id: 'only', type: 'set', values: {} }] },
  });
  expect(wf.status, JSON.stringify(wf.body)).toBe(201);
  workflowId = wf.body.id;
  // The demo account's: another account's ids.
  const demoLogin = await env.api('/api/auth/login', { json: { email: env.demo.adminEmail, password: env.demo.adminPassword } });
  const foreign = await env.api(`/api/workflows/${env.demo.workflowId}/schedules`, {
    auth: demoLogin.body.token,
    json: { name: 'demo nightly', expression: 'cron(0 3 * * ? *)', timezone: 'UTC' },
  });
  expect(foreign.status, JSON.stringify(foreign.body)).toBe(201);
  foreignScheduleId = foreign.body.id;
}, 120_000);
afterAll(async () => env?.stop());

describe('creating a schedule', () => {
  it('without scripts, "Preview" keeps the typed values and lists the next five fire times across the DST change', async () => {
    const { context, page } = await signedIn({ javaScriptEnabled: false });
    await page.goto(`${env.url}/console/schedules`);
    expect(await mainText(page)).toContain('0 of 5 schedules');
    await page.getByRole('link', { name: 'Create schedule' }).first().click();
    await page.getByLabel('Workflow').selectOption({ label: 'Nightly report' });
    await page.getByLabel('Name').fill('Berlin night');
    await page.getByLabel('Expression').fill('cron(30 2 * * ? *)');
    await page.getByLabel('Timezone').fill(ZONE);
    await page.getByLabel('Start (optional)').fill('2027-03-26T00:00');
    await page.getByLabel('Input variables (JSON)').fill('{"env": "production"}');
    await submitted(page, page.getByRole('button', { name: 'Preview' }));
    const expected = expectedFires(5);
    expect(expected).toEqual(['2027-03-26 02:30', '2027-03-27 02:30', '2027-03-29 02:30', '2027-03-30 02:30', '2027-03-31 02:30']);
    expect(await previewTimes(page)).toEqual(expected);
    // What was typed is kept.
    expect(await page.getByLabel('Expression').inputValue()).toBe('cron(30 2 * * ? *)');
    expect(await page.getByLabel('Timezone').inputValue()).toBe(ZONE);
    expect(await page.getByLabel('Start (optional)').inputValue()).toBe('2027-03-26T00:00');
    expect(await page.getByLabel('Name').inputValue()).toBe('Berlin night');
    expect(await page.getByLabel('Input variables (JSON)').inputValue()).toBe('{"env": "production"}');
    expect(await page.getByLabel('Workflow').inputValue()).toBe(workflowId);
    // Nothing was created by a preview.
    expect((await api(`/api/workflows/${workflowId}/schedules`)).body.items).toEqual([]);
    await page.getByRole('button', { name: 'Create schedule' }).click();
    await page.waitForURL(`${env.url}/console/schedules`);
    expect(await mainText(page)).toContain('1 of 5 schedules');
    const row = page.getByRole('row', { name: /Berlin night/ });
    expect(await row.textContent()).toContain('cron(30 2 * * ? *)');
    expect(await row.textContent()).toContain(ZONE);
    expect(await row.textContent()).toContain('2027-03-26 02:30');
    expect(await row.textContent()).toContain('Enabled');
    const [created] = (await api(`/api/workflows/${workflowId}/schedules`)).body.items;
    expect(created).toMatchObject({
      name: 'Berlin night',
      timezone: ZONE,
      variables: { env: 'production' },
      startAt: '2027-03-26T00:00:00+01:00',
    });
    expectNoCspViolations(context);
    await context.close();
  });

  it('with scripts, the preview follows what is typed', async () => {
    const { context, page } = await signedIn();
    await page.goto(`${env.url}/console/schedules/new?workflowId=${workflowId}`);
    expect(await page.getByLabel('Workflow').inputValue()).toBe(workflowId);
    await page.getByLabel('Timezone').fill(ZONE);
    await page.getByLabel('Start (optional)').fill('2027-03-26T00:00');
    await page.getByLabel('Expression').fill('cron(30 2 * * ? *)');
    await expect.poll(() => previewTimes(page), { timeout: 10_000 }).toEqual(expectedFires(5));
    // htmx binds the swapped-in section's triggers once it has settled: typing before that is not seen.
    await settled(page);
    // A bad expression: the reason, in place of the times.
    await page.getByLabel('Expression').fill('cron(61 2 * * ? *)');
    await expect.poll(() => page.locator('#schedule-preview').textContent(), { timeout: 10_000 }).toContain('expression');
    expect(await previewTimes(page)).toEqual([]);
    await settled(page);
    await page.getByLabel('Expression').fill('rate(1 day)');
    await expect.poll(async () => (await previewTimes(page)).length, { timeout: 10_000 }).toBe(5);
    // 24 hours apart from the start, in local time across the change: 00:00 then 01:00 after 03-28.
    expect(await previewTimes(page)).toEqual([
      '2027-03-26 00:00',
      '2027-03-27 00:00',
      '2027-03-28 00:00',
      '2027-03-29 01:00',
      '2027-03-30 01:00',
    ]);
    await submitted(page, page.getByRole('button', { name: 'Preview' }));
    expect(await page.getByLabel('Expression').inputValue()).toBe('rate(1 day)');
    expect(await previewTimes(page)).toHaveLength(5);
    await expectAccessible(page);
    await shot(page, 'schedule-preview');
    await shot(page, 'schedule-preview', 'dark');
    await page.goto(`${env.url}/console/schedules`);
    await expectAccessible(page);
    await shot(page, 'schedules-list');
    await shot(page, 'schedules-list', 'dark');
    // The workflow's page leads to its schedules.
    await page.goto(`${env.url}/console/workflows/${workflowId}`);
    await page.getByRole('link', { name: 'Create schedule' }).click();
    await page.waitForURL(`${env.url}/console/schedules/new?workflowId=${workflowId}`);
    expect(await page.getByLabel('Workflow').inputValue()).toBe(workflowId);
    expectNoCspViolations(context);
    await context.close();
  });

  it('shows each error at its field, focuses the first, and creates nothing', async () => {
    const { context, page } = await signedIn();
    await page.goto(`${env.url}/console/schedules/new`);
    await page.getByLabel('Expression').fill('cron(0 9 * * * *)');
    await page.getByLabel('Timezone').fill('Mars/Olympus');
    await page.getByLabel('Start (optional)').fill('2027-03-28T02:30');
    await page.getByLabel('Input variables (JSON)').fill('[1');
    await submitted(page, page.getByRole('button', { name: 'Create schedule' }));
    expect(await page.getByRole('alert').textContent()).toContain('The schedule was not created.');
    for (const [label, message] of [
      ['Workflow', 'choose the workflow'],
      ['Expression', ''],
      ['Timezone', 'IANA'],
      ['Start (optional)', 'must be a date and time that exists in Mars/Olympus'],
      ['Input variables (JSON)', 'is not JSON'],
    ] as const) {
      const field = page.getByLabel(label);
      expect(await field.getAttribute('aria-invalid'), label).toBe('true');
      const id = await field.getAttribute('id');
      const error = page.locator(`#${id}-error`);
      expect(await error.isVisible(), label).toBe(true);
      if (message) expect(await error.textContent(), label).toContain(message);
      expect(await field.getAttribute('aria-describedby'), label).toContain(`${id}-error`);
    }
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('workflowId');
    expect(await page.getByLabel('Timezone').inputValue()).toBe('Mars/Olympus');
    await expectAccessible(page);
    await shot(page, 'schedule-errors');
    // The same for the API's own refusals (the expression's and the variables' types, from the domain).
    await page.getByLabel('Workflow').selectOption({ label: 'Nightly report' });
    await page.getByLabel('Timezone').fill(ZONE);
    await page.getByLabel('Start (optional)').fill('');
    await page.getByLabel('Input variables (JSON)').fill('{"env": 5}');
    await page.getByLabel('Expression').fill('cron(0 9 * * * *)');
    await submitted(page, page.getByRole('button', { name: 'Create schedule' }));
    expect(await page.getByLabel('Expression').getAttribute('aria-invalid')).toBe('true');
    await page.getByLabel('Expression').fill('cron(0 9 * * ? *)');
    await submitted(page, page.getByRole('button', { name: 'Create schedule' }));
    expect(await page.getByLabel('Input variables (JSON)').getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator('#variables-error').textContent()).toMatch(/string/);
    expect((await api(`/api/workflows/${workflowId}/schedules`)).body.items).toHaveLength(1);
    expectNoCspViolations(context);
    await context.close();
  });
});

describe("a schedule's actions", () => {
  it('"Run now" starts a run, "Pause" and "Resume" change its state and the count, "Delete" asks first', async () => {
    const { context, page } = await signedIn();
    await page.goto(`${env.url}/console/schedules`);
    const row = () => page.getByRole('row', { name: /Berlin night/ });
    await row()
      .getByRole('button', { name: /Run now/ })
      .click();
    await page.waitForURL(/\/console\/runs\/[a-z0-9_]+$/);
    const runId = page.url().split('/').pop() as string;
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toContain(runId);
    await page.goto(`${env.url}/console/schedules`);
    expect(await row().textContent()).toContain(runId);
    await row().getByRole('button', { name: /Pause/ }).click();
    await page.waitForURL(`${env.url}/console/schedules`);
    expect(await row().textContent()).toContain('Paused');
    expect(await mainText(page)).toContain('0 of 5 schedules');
    await row()
      .getByRole('button', { name: /Resume/ })
      .click();
    await page.waitForURL(`${env.url}/console/schedules`);
    expect(await row().textContent()).toContain('Enabled');
    expect(await mainText(page)).toContain('1 of 5 schedules');
    await row()
      .getByRole('link', { name: /Delete/ })
      .click();
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe("Delete schedule 'Berlin night'?");
    await expectAccessible(page);
    await shot(page, 'schedule-delete');
    await page.getByRole('button', { name: 'Delete' }).click();
    await page.waitForURL(`${env.url}/console/schedules`);
    expect(await page.getByRole('row', { name: /Berlin night/ }).count()).toBe(0);
    expect(await mainText(page)).toContain('0 of 5 schedules');
    expectNoCspViolations(context);
    await context.close();
  });

  it("shows the plan's limit, and the form says so when it is reached (nothing created)", async () => {
    for (let i = 0; i < 5; i++) {
      const r = await api(`/api/workflows/${workflowId}/schedules`, {
        name: `hourly ${i}`,
        expression: `cron(${i} * * * ? *)`,
        timezone: 'UTC',
      });
      expect(r.status, JSON.stringify(r.body)).toBe(201);
    }
    const { context, page } = await signedIn();
    await page.goto(`${env.url}/console/schedules`);
    expect(await mainText(page)).toContain('5 of 5 schedules');
    await page.goto(`${env.url}/console/schedules/new?workflowId=${workflowId}`);
    await page.getByLabel('Expression').fill('rate(5 minutes)');
    const answer = page.waitForResponse((r) => r.url().endsWith('/console/schedules/new') && r.request().method() === 'POST');
    await page.getByRole('button', { name: 'Create schedule' }).click();
    expect((await answer).status()).toBe(403);
    expect(await page.getByRole('alert').textContent()).toContain('allows 5 enabled schedules');
    expect(await page.getByLabel('Expression').inputValue()).toBe('rate(5 minutes)');
    expect((await api(`/api/workflows/${workflowId}/schedules`)).body.items).toHaveLength(5);
    await expectAccessible(page);
    expectNoCspViolations(context);
    await context.close();
  });

  it("answers another account's ids as unknown ones (404), changing nothing", async () => {
    const { context, page } = await signedIn();
    for (const path of [`/console/schedules/${foreignScheduleId}/delete`, `/console/schedules?workflowId=${env.demo.workflowId}`]) {
      const res = await page.goto(`${env.url}${path}`);
      expect(res?.status(), path).toBe(404);
      await expectAccessible(page);
    }
    const csrf = await page
      .goto(`${env.url}/console/schedules/new`)
      .then(() => page.locator('input[name=csrf]').first().getAttribute('value'));
    for (const action of ['delete', 'pause', 'run']) {
      const res = await page.request.post(`${env.url}/console/schedules/${foreignScheduleId}/${action}`, {
        form: { csrf: csrf as string },
        maxRedirects: 0,
      });
      expect(res.status(), action).toBe(404);
    }
    const create = await page.request.post(`${env.url}/console/schedules/new`, {
      form: {
        csrf: csrf as string,
        workflowId: env.demo.workflowId,
        expression: 'rate(5 minutes)',
        timezone: 'UTC',
        overlap: 'skip',
        intent: 'create',
      },
      maxRedirects: 0,
    });
    expect(create.status()).toBe(404);
    const demoLogin = await env.api('/api/auth/login', { json: { email: env.demo.adminEmail, password: env.demo.adminPassword } });
    const still = await env.api(`/api/schedules/${foreignScheduleId}`, { auth: demoLogin.body.token });
    expect(still.body).toMatchObject({ enabled: true, fires: 0 });
    expectNoCspViolations(context);
    await context.close();
  });
});
