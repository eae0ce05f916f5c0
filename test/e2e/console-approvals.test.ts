import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorkflow } from '../../shared/domain/workflows.ts';
import { WorkflowDefinition } from '../../shared/engine/definition.ts';
import { startRun } from '../../shared/engine/runs.ts';
import { eventually } from '../support/engine.ts';
import { givenAccount, PASSWORD, uniqueEmail } from '../support/fixtures.ts';
import {
  consoleContext,
  consoleStack,
  expectAccessible,
  expectAccessibleAtBothWidths,
  expectNoCspViolations,
  shot,
  signIn,
} from '../support/console-browser.ts';

/**
 * The console's approvals in a browser: the inbox, an approval's page, deciding it (form values, comment,
 * the run moves on, audited with channel `console`), a quorum by two members in two browsers, the keyboard
 * alone, a member who is not a reviewer, another account's id, a hostile title, and forged form POSTs.
 */

let env: Awaited<ReturnType<typeof consoleStack>>;
let browser: Browser;
/** The demo admin's Bearer session (the console API: members, workflows). */
let adminToken: string;
/** A member of the demo account, created through the console API. */
let member: { id: string; email: string };

beforeAll(async () => {
  env = await consoleStack('console-approvals');
  browser = env.browser;
  const login = await env.api('/api/auth/login', { json: { email: env.demo.adminEmail, password: env.demo.adminPassword }, auth: '' });
  expect(login.status, JSON.stringify(login.body)).toBe(200);
  adminToken = login.body.token;
  const created = await env.api('/api/members', {
    json: { email: uniqueEmail('member'), password: PASSWORD, role: 'member' },
    auth: adminToken,
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  member = { id: created.body.id, email: created.body.email };
});
afterAll(async () => env?.stop());

/** The navigation's Approvals link, with or without its count ("Approvals 3 waiting for you"). */
const NAV_APPROVALS = /^Approvals( \d+\+? waiting for you)?$/;

const TERMINAL = ['SUCCEEDED', 'FAILED', 'CANCELLED', 'TIMED_OUT'];

/** The pending approval of a run, once the run waits at it (through the v1 API). */
async function approvalOf(executionId: string): Promise<{ approvalId: string; title: string }> {
  await eventually(
    () => env.api(`/api/v1/executions/${executionId}`),
    (r) => r.body.status === 'WAITING_APPROVAL' || TERMINAL.includes(r.body.status),
    60_000,
  );
  const list = await eventually(
    () => env.api('/api/v1/approvals?limit=100'),
    (r) => Array.isArray(r.body.items) && r.body.items.some((a: { executionId: string }) => a.executionId === executionId),
    60_000,
  );
  return list.body.items.find((a: { executionId: string }) => a.executionId === executionId);
}

/** A run of the demo workflow (its webhook, as `npm start` prints it), waiting at its approval. */
async function demoRun(env_: string = 'production') {
  const trigger = await env.api(`/api/webhooks/${env.demo.webhookId}/trigger`, { json: { env: env_ } });
  expect(trigger.status, JSON.stringify(trigger.body)).toBe(200);
  const executionId: string = trigger.body.executionId;
  return { executionId, ...(await approvalOf(executionId)) };
}

/** A workflow of the demo account with one approval step (the console API), and a run of it waiting there (v1). */
async function approvalRun(step: Record<string, unknown>, variables: Record<string, unknown> = {}) {
  const definition = {
    steps: [
      { id: 'approve', type: 'manual_approval', title: 'Approve', reviewers: ['role:admin'], timeoutSeconds: 86_400, ...step },
      { id: 'after', type: 'set', values: { by: '{% $steps.approve.decidedBy %}' } },
    ],
    output: "{% { 'by': $vars.by, 'replicas': $vars.replicas, 'region': $vars.region, 'canary': $vars.canary } %}",
  };
  const wf = await env.api('/api/workflows', { json: { name: `approvals ${Date.now()}`, definition }, auth: adminToken });
  expect(wf.status, JSON.stringify(wf.body)).toBe(201);
  const run = await env.api(`/api/v1/workflows/${wf.body.id}/runs`, { json: { variables } });
  expect(run.status, JSON.stringify(run.body)).toBeLessThan(300);
  const executionId: string = run.body.executionId;
  return { executionId, workflowId: wf.body.id as string, ...(await approvalOf(executionId)) };
}

const settled = (executionId: string) =>
  eventually(
    () => env.api(`/api/v1/executions/${executionId}`),
    (r) => TERMINAL.includes(r.body.status),
    60_000,
  );

/** A signed-in browser page (its own context: its own session). */
async function signedIn(email: string, password: string): Promise<{ context: BrowserContext; page: Page }> {
  const context = await consoleContext(browser);
  const page = await context.newPage();
  await signIn(page, env.url, email, password);
  return { context, page };
}
const asAdmin = () => signedIn(env.demo.adminEmail, env.demo.adminPassword);
const asMember = () => signedIn(member.email, PASSWORD);

/** Press a button and wait for the page its form POST leads to; the POST's response. */
async function press(page: Page, name: string) {
  const [response] = await Promise.all([
    page.waitForResponse((r) => r.request().method() === 'POST' && new URL(r.url()).pathname.startsWith('/console/approvals/')),
    page.getByRole('button', { name, exact: true }).click(),
  ]);
  await page.waitForLoadState('domcontentloaded');
  return response;
}

describe('the approvals inbox and page', () => {
  it('lists the demo run waiting at its approval; its page decides it with edited form values and a comment; the run moves on', async () => {
    const run = await demoRun('production');
    const { context, page } = await asAdmin();

    // The inbox, from the navigation.
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: NAV_APPROVALS }).click();
    await page.waitForURL((u) => u.pathname === '/console/approvals');
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Approvals');
    const row = page.getByRole('row').filter({ has: page.getByRole('link', { name: run.executionId }) });
    expect(await row.count()).toBe(1);
    expect(await row.getByRole('link', { name: 'Deploy to production', exact: true }).getAttribute('href')).toBe(
      `/console/approvals/${run.approvalId}`,
    );
    expect(await row.getByRole('link', { name: run.executionId }).getAttribute('href')).toBe(`/console/runs/${run.executionId}`);
    const cells = await row.getByRole('cell').allTextContents();
    expect(cells.join(' | ')).toContain('Deploy with approval');
    expect(cells.join(' | ')).toContain('env: "production"');
    expect(cells.at(-1)).toBe('0 of 1');
    // Its form has a required field: approved on its page, not from the inbox.
    expect(await row.getByRole('link', { name: /^Needs its form: open it/ }).getAttribute('href')).toBe(
      `/console/approvals/${run.approvalId}`,
    );
    expect(await row.getByRole('button', { name: /^Approve/ }).count()).toBe(0);
    // Admins may see every pending approval too.
    expect(await page.getByRole('link', { name: 'All pending' }).isVisible()).toBe(true);
    await expectAccessible(page);
    await shot(page, 'approvals-inbox');
    await shot(page, 'approvals-inbox', 'dark');
    await page.getByRole('link', { name: 'All pending' }).click();
    await page.waitForURL((u) => u.searchParams.get('all') === '1');
    expect(await page.getByRole('link', { name: run.executionId }).count()).toBe(1);
    await expectAccessible(page);

    // A second tab on the same approval, opened before it is decided (for the second decision below).
    const stale = await context.newPage();
    await stale.goto(`${env.url}/console/approvals/${run.approvalId}`);

    // The approval's page (the seeded demo run waits too: this run's row).
    await row.getByRole('link', { name: 'Deploy to production', exact: true }).click();
    await page.waitForURL((u) => u.pathname === `/console/approvals/${run.approvalId}`);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Deploy to production');
    const details = await page.getByRole('table', { name: 'Details' }).textContent();
    expect(details).toContain(run.executionId);
    expect(details).toContain('Deploy with approval');
    expect(details).toContain('0 of 1');
    expect(details).toContain('env: "production"');
    const ticket = page.getByLabel('ticket');
    expect(await ticket.inputValue()).toBe('');
    expect(await ticket.getAttribute('required')).not.toBeNull();
    await expectAccessible(page);
    await shot(page, 'approval-pending');
    await shot(page, 'approval-pending', 'dark');

    // Approve with the form's value and a comment: back on the same page, which shows the outcome.
    await ticket.fill('CHG-42');
    await page.getByLabel('Comment').fill('Ship it <b>now</b>');
    const posted = await press(page, 'Approve');
    expect(posted.status()).toBe(303);
    expect(new URL(page.url()).pathname).toBe(`/console/approvals/${run.approvalId}`);
    const outcome = await page.getByRole('region', { name: 'Outcome' }).textContent();
    expect(outcome).toContain('APPROVED');
    expect(outcome).toContain(env.demo.adminEmail);
    expect(outcome).toContain('via console');
    expect(outcome).toContain('Ship it <b>now</b>');
    expect(await page.getByRole('button', { name: 'Approve' }).count()).toBe(0);
    const history = page.getByRole('table', { name: 'Decisions and refused attempts' });
    expect(await history.getByRole('row').count()).toBe(2);
    expect(await history.getByRole('row').nth(1).textContent()).toContain('console');
    await expectAccessible(page);
    await shot(page, 'approval-decided');
    await shot(page, 'approval-decided', 'dark');

    // The run moved on, and the API shows the decision as the console made it.
    expect((await settled(run.executionId)).body.status).toBe('SUCCEEDED');
    const result = await env.api(`/api/v1/executions/${run.executionId}/result`);
    expect(result.body.output).toMatchObject({ ticket: 'CHG-42' });
    const v1 = await env.api(`/api/v1/approvals/${run.approvalId}`);
    expect(v1.body).toMatchObject({ status: 'APPROVED', decision: 'approve', comment: 'Ship it <b>now</b>' });
    expect(v1.body.history).toEqual([
      expect.objectContaining({
        outcome: 'decided',
        decision: 'approve',
        channel: 'console',
        form: { original: {}, edited: { ticket: 'CHG-42' } },
      }),
    ]);

    // The tab opened before: deciding again says it was already handled (409), and records only the refusal.
    await stale.getByLabel('ticket').fill('CHG-43');
    const again = await press(stale, 'Reject');
    expect(again.status()).toBe(409);
    expect(await stale.getByRole('alert').textContent()).toContain('already handled');
    expect(await stale.getByRole('region', { name: 'Outcome' }).textContent()).toContain('APPROVED');
    await expectAccessible(stale);
    await shot(stale, 'approval-already-handled');
    const after = await env.api(`/api/v1/approvals/${run.approvalId}`);
    expect(after.body).toMatchObject({ status: 'APPROVED', decision: 'approve' });
    expect(after.body.history.map((h: { outcome: string; code?: string }) => `${h.outcome} ${h.code ?? ''}`.trim())).toEqual([
      'decided',
      'refused APPROVAL_ALREADY_HANDLED',
    ]);
    expectNoCspViolations(context);
    await context.close();
  }, 240_000);

  it('a quorum of two is decided by two members in two browsers; the run moves on once', async () => {
    const run = await approvalRun({
      title: 'Scale up',
      description: 'Two people must agree.',
      reviewers: ['role:admin', 'role:member'],
      minApprovals: 2,
      form: [
        { name: 'replicas', type: 'number', label: 'Replicas', required: true, default: 2 },
        { name: 'region', type: 'string', label: 'Region', required: false, enum: ['eu', 'us'], default: 'eu' },
        { name: 'canary', type: 'boolean', label: 'Canary first', required: false, default: true },
      ],
    });
    const admin = await asAdmin();
    const other = await asMember();

    // The member's inbox lists it (members review it too); they get no "All pending".
    await other.page.goto(`${env.url}/console/approvals`);
    const row = other.page.getByRole('row').filter({ has: other.page.getByRole('link', { name: 'Scale up' }) });
    expect(await row.count()).toBe(1);
    expect((await row.getByRole('cell').allTextContents()).at(-1)).toBe('0 of 2');
    expect(await other.page.getByRole('link', { name: 'All pending' }).count()).toBe(0);
    await expectAccessible(other.page);

    // The first approval: one vote, the page says one more is needed.
    await admin.page.goto(`${env.url}/console/approvals/${run.approvalId}`);
    expect(await admin.page.getByLabel('Replicas').inputValue()).toBe('2');
    await admin.page.getByLabel('Replicas').fill('3');
    await admin.page.getByLabel('Comment').fill('first');
    expect((await press(admin.page, 'Approve')).status()).toBe(303);
    expect(await admin.page.getByText('You approved this.').isVisible()).toBe(true);
    expect(await admin.page.getByRole('table', { name: 'Details' }).textContent()).toContain('1 of 2; 1 more needed');
    await expectAccessible(admin.page);
    await shot(admin.page, 'approval-quorum-voted');
    expect((await env.api(`/api/v1/executions/${run.executionId}`)).body.status).toBe('WAITING_APPROVAL');

    // The second, in the other browser: the quorum is reached, with this vote's form values.
    await other.page.getByRole('link', { name: 'Scale up' }).click();
    await other.page.waitForURL((u) => u.pathname === `/console/approvals/${run.approvalId}`);
    expect(await other.page.getByRole('table', { name: 'Details' }).textContent()).toContain('1 of 2; 1 more needed');
    await other.page.getByLabel('Replicas').fill('5');
    await other.page.getByLabel('Region').selectOption('us');
    await other.page.getByLabel('Canary first').selectOption({ label: 'No' });
    await other.page.getByLabel('Comment').fill('second');
    expect((await press(other.page, 'Approve')).status()).toBe(303);
    expect(await other.page.getByRole('region', { name: 'Outcome' }).textContent()).toContain('APPROVED');
    await expectAccessible(other.page);
    await shot(other.page, 'approval-quorum-decided');

    const done = await settled(run.executionId);
    expect(done.body.status).toBe('SUCCEEDED');
    const result = await env.api(`/api/v1/executions/${run.executionId}/result`);
    expect(result.body.output).toMatchObject({ by: member.id, replicas: 5, region: 'us', canary: false });
    const v1 = await env.api(`/api/v1/approvals/${run.approvalId}`);
    expect(v1.body).toMatchObject({ status: 'APPROVED', approvals: 2, minApprovals: 2, decidedBy: member.id, comment: 'second' });
    expect(v1.body.history.map((h: { channel: string; outcome: string; comment?: string }) => [h.outcome, h.channel, h.comment])).toEqual([
      ['decided', 'console', 'first'],
      ['decided', 'console', 'second'],
    ]);
    for (const b of [admin, other]) {
      expectNoCspViolations(b.context);
      await b.context.close();
    }
  }, 240_000);

  it('signs in and approves with the keyboard alone', async () => {
    const run = await demoRun('staging');
    const context = await consoleContext(browser);
    const page = await context.newPage();
    // The address typed in: the sign-in page, coming back to the approval.
    await page.goto(`${env.url}/console/approvals/${run.approvalId}`);
    expect(new URL(page.url()).pathname).toBe('/console/login');

    /** Tab until the focused element is the one named `name` (a field's label, a button's or link's text). */
    const tabTo = async (name: string) => {
      for (let i = 0; i < 60; i++) {
        await page.keyboard.press('Tab');
        const focused = await page.evaluate(() => {
          const el = document.activeElement as HTMLInputElement | null;
          if (!el) return '';
          return (el.labels?.[0]?.textContent ?? el.textContent ?? '').trim();
        });
        if (focused === name) return;
      }
      throw new Error(`${name} was not reached with Tab`);
    };
    await tabTo('Email');
    await page.keyboard.type(env.demo.adminEmail);
    await tabTo('Password');
    await page.keyboard.type(env.demo.adminPassword);
    await Promise.all([page.waitForURL((u) => u.pathname === `/console/approvals/${run.approvalId}`), page.keyboard.press('Enter')]);

    await tabTo('ticket');
    await page.keyboard.type('CHG-KEYS');
    await tabTo('Comment');
    await page.keyboard.type('typed, not clicked');
    await tabTo('Approve');
    const [posted] = await Promise.all([page.waitForResponse((r) => r.request().method() === 'POST'), page.keyboard.press('Enter')]);
    expect(posted.status()).toBe(303);
    await page.waitForLoadState('domcontentloaded');
    expect(await page.getByRole('region', { name: 'Outcome' }).textContent()).toContain('APPROVED');
    expect((await settled(run.executionId)).body.status).toBe('SUCCEEDED');
    const v1 = await env.api(`/api/v1/approvals/${run.approvalId}`);
    expect(v1.body).toMatchObject({ status: 'APPROVED', comment: 'typed, not clicked' });
    expect(v1.body.history[0]).toMatchObject({ channel: 'console', form: { edited: { ticket: 'CHG-KEYS' } } });
    expectNoCspViolations(context);
    await context.close();
  }, 180_000);
});

describe('what the approval pages refuse', () => {
  it('a member who is not a reviewer sees the page read only, and their POST is refused 403 by the domain', async () => {
    const run = await demoRun('staging');
    const { context, page } = await asMember();
    // Not in their inbox, and no "All pending" for a member (asked for anyway: 403).
    await page.goto(`${env.url}/console/approvals`);
    expect(await page.getByRole('link', { name: run.executionId }).count()).toBe(0);
    const all = await page.goto(`${env.url}/console/approvals?all=1`);
    expect(all?.status()).toBe(403);

    const opened = await page.goto(`${env.url}/console/approvals/${run.approvalId}`);
    expect(opened?.status()).toBe(200);
    expect(await page.getByText('Read only.').isVisible()).toBe(true);
    expect(await page.getByText('You are not a reviewer of this approval').isVisible()).toBe(true);
    expect(await page.getByRole('button', { name: 'Approve' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Reject' }).count()).toBe(0);
    await expectAccessible(page);
    await shot(page, 'approval-read-only');

    // Hidden buttons are not the protection: the member's own valid form POST is refused by `decide`.
    const csrf = await page.locator('input[name="csrf"]').first().inputValue();
    const refused = await page.request.post(`${env.url}/console/approvals/${run.approvalId}`, {
      form: { csrf, decision: 'approve', 'field.ticket': 'NOPE' },
      maxRedirects: 0,
    });
    expect(refused.status()).toBe(403);
    expect(await refused.text()).toContain('not a reviewer');
    const v1 = await env.api(`/api/v1/approvals/${run.approvalId}`);
    expect(v1.body.status).toBe('PENDING');
    expect(v1.body.history).toEqual([
      expect.objectContaining({ outcome: 'refused', status: 403, code: 'NOT_A_REVIEWER', channel: 'console', userId: member.id }),
    ]);
    expectNoCspViolations(context);
    await context.close();
  }, 180_000);

  it("another account's approval is the same 404 page as an unknown one", async () => {
    const other = await givenAccount();
    const workflow = await createWorkflow(
      { accountId: other.account.accountId, userId: other.admin.userId, role: 'admin' },
      {
        name: 'elsewhere',
        definition: WorkflowDefinition.parse({
          steps: [{ id: 'approve', type: 'manual_approval', title: 'Theirs', reviewers: ['role:admin'] }],
        }),
        recovery: false,
        editors: [],
      },
    );
    const { execution } = await startRun({ workflow, trigger: 'api', variables: {}, startedBy: other.admin.userId });
    const theirs = await eventually(
      () => env.api(`/api/v1/approvals?limit=100`, { auth: other.adminKey.token }),
      (r) => r.body.items?.some((a: { executionId: string }) => a.executionId === execution.executionId),
      60_000,
    );
    const foreignId: string = theirs.body.items.find((a: { executionId: string }) => a.executionId === execution.executionId).approvalId;
    const unknownId = `ap_${'0'.repeat(26)}`;

    const { context, page } = await asAdmin();
    const texts: string[] = [];
    for (const id of [foreignId, unknownId]) {
      const res = await page.goto(`${env.url}/console/approvals/${id}`);
      expect(res?.status(), id).toBe(404);
      expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Not found');
      texts.push(((await page.locator('main').textContent()) ?? '').replaceAll(id, '<id>').replace(/Request \S+/, 'Request <id>'));
    }
    expect(texts[0]).toBe(texts[1]);
    expect(texts[0]).not.toContain('Theirs');
    await expectAccessible(page);
    await shot(page, 'approval-not-found');
    // Deciding it is the same 404, and changes nothing there.
    const csrf = await page.locator('input[name="csrf"]').first().inputValue();
    const post = await page.request.post(`${env.url}/console/approvals/${foreignId}`, {
      form: { csrf, decision: 'reject' },
      maxRedirects: 0,
    });
    expect(post.status()).toBe(404);
    const still = await env.api(`/api/v1/approvals/${foreignId}`, { auth: other.adminKey.token });
    expect(still.body).toMatchObject({ status: 'PENDING' });
    expect(still.body.history).toEqual([]);
    expectNoCspViolations(context);
    await context.close();
  }, 180_000);

  it('an approval titled <img src=x onerror=alert(1)> shows as text in the inbox and on its page', async () => {
    const XSS = '<img src=x onerror=alert(1)>';
    const run = await approvalRun({ title: XSS, description: `About ${XSS}` }, {});
    const { context, page } = await asAdmin();
    const dialogs: string[] = [];
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    await page.goto(`${env.url}/console/approvals`);
    expect(await page.getByRole('link', { name: XSS }).count()).toBe(1);
    expect(await page.locator('main img').count()).toBe(0);
    await page.getByRole('link', { name: XSS }).click();
    await page.waitForURL((u) => u.pathname === `/console/approvals/${run.approvalId}`);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe(XSS);
    expect(await page.getByText(`About ${XSS}`).isVisible()).toBe(true);
    expect(await page.title()).toBe(`${XSS} · Flowgate`);
    expect(await page.locator('img').count()).toBe(0);
    expect(dialogs).toEqual([]);
    await expectAccessible(page);
    await shot(page, 'approval-xss-title');
    expectNoCspViolations(context);
    await context.close();
  }, 180_000);

  it('a form POST without the CSRF token, with another session’s, or cross-site is refused 403 and changes nothing', async () => {
    const run = await demoRun('staging');
    const first = await asAdmin();
    const second = await asAdmin();
    await first.page.goto(`${env.url}/console/approvals/${run.approvalId}`);
    await second.page.goto(`${env.url}/console/approvals/${run.approvalId}`);
    const cookie = (await first.context.cookies()).find((c) => c.name === 'flowgate_session');
    expect(cookie).toBeDefined();
    const own = await first.page.locator('input[name="csrf"]').first().inputValue();
    const others = await second.page.locator('input[name="csrf"]').first().inputValue();
    expect(others).not.toBe(own);

    const post = (form: Record<string, string>, headers: Record<string, string> = {}) =>
      fetch(`${env.url}/console/approvals/${run.approvalId}`, {
        method: 'POST',
        redirect: 'manual',
        headers: {
          cookie: `${cookie?.name}=${cookie?.value}`,
          'content-type': 'application/x-www-form-urlencoded',
          'sec-fetch-site': 'same-origin',
          origin: env.url,
          ...headers,
        },
        body: new URLSearchParams(form).toString(),
      });
    const decision = { decision: 'approve', 'field.ticket': 'FORGED', comment: 'forged' };
    const attempts = {
      'no token': await post(decision),
      "another session's token": await post({ csrf: others, ...decision }),
      'cross-site': await post({ csrf: own, ...decision }, { 'sec-fetch-site': 'cross-site', origin: 'https://evil.example' }),
    };
    for (const [what, res] of Object.entries(attempts)) {
      expect(res.status, what).toBe(403);
      expect(res.headers.get('content-type'), what).toMatch(/^text\/html/);
    }
    // Nothing changed: still pending, nothing in its history, the run still waits.
    const v1 = await env.api(`/api/v1/approvals/${run.approvalId}`);
    expect(v1.body.status).toBe('PENDING');
    expect(v1.body.history).toEqual([]);
    expect((await env.api(`/api/v1/executions/${run.executionId}`)).body.status).toBe('WAITING_APPROVAL');

    // The same POST with this session's token decides (the checks above were what refused).
    const ok = await post({ csrf: own, ...decision, comment: 'real' });
    expect(ok.status).toBe(303);
    expect((await env.api(`/api/v1/approvals/${run.approvalId}`)).body).toMatchObject({ status: 'APPROVED', comment: 'real' });
    for (const b of [first, second]) {
      expectNoCspViolations(b.context);
      await b.context.close();
    }
  }, 180_000);
});

describe('deciding from the inbox', () => {
  const checked = expectAccessibleAtBothWidths;
  /** The count the navigation shows (0 when it shows none). */
  const navCount = async (page: Page) => {
    const name = (await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: NAV_APPROVALS }).textContent()) ?? '';
    return Number(/(\d+)/.exec(name)?.[1] ?? 0);
  };
  /** The pending approvals the demo admin's key may decide, as the v1 API lists them. */
  const apiCount = async () => (await env.api('/api/v1/approvals?limit=100')).body.items.length as number;
  /** Press a button of the inbox and wait for the inbox its POST leads back to. */
  async function pressInbox(page: Page, name: string) {
    const [res] = await Promise.all([
      page.waitForResponse((r) => r.request().isNavigationRequest() && r.request().frame() === page.mainFrame() && r.status() !== 303),
      page.getByRole('button', { name, exact: true }).click(),
    ]);
    await page.waitForLoadState('domcontentloaded');
    expect(res.status()).toBe(200);
    expect(new URL(page.url()).searchParams.get('done')).toBe('1');
  }

  it('counts what waits for me in the navigation as the API does; sorts by deadline; approves two at once, rejects one, reports one already decided', async () => {
    const tag = Date.now().toString(36);
    // Made in the order opposite to their deadlines', so that oldest first and deadline soonest differ.
    const never = await approvalRun({ title: `Never ${tag}`, timeoutSeconds: undefined });
    const late = await approvalRun({ title: `Late ${tag}`, timeoutSeconds: 7200 });
    const soon = await approvalRun({ title: `Soon ${tag}`, timeoutSeconds: 600 });
    const formed = await approvalRun({
      title: `Formed ${tag}`,
      form: [{ name: 'ticket', type: 'string', label: 'Ticket', required: true }],
    });
    const { context, page } = await asAdmin();

    // The overview and the inbox count what waits for me, as the API lists it.
    await page.goto(`${env.url}/console`);
    const waiting = await apiCount();
    expect(waiting).toBeGreaterThanOrEqual(4);
    expect(await navCount(page)).toBe(waiting);
    await page
      .getByRole('navigation', { name: 'Console' })
      .getByRole('link', { name: `Approvals ${waiting} waiting for you` })
      .click();
    await page.waitForURL((u) => u.pathname === '/console/approvals');
    expect(await navCount(page)).toBe(waiting);
    await checked(page, 'approvals-inbox-decide');
    await shot(page, 'approvals-inbox-decide', 'dark');
    await expectAccessible(page);
    await page.emulateMedia({ colorScheme: 'light' });

    // Deadline soonest: the address keeps it (reload, Back); those without a deadline last.
    const titles = [soon.title, late.title, never.title];
    const order = async () =>
      (await page.getByRole('table', { name: 'Pending approvals where you are a reviewer' }).getByRole('link').allTextContents()).filter(
        (t) => titles.includes(t),
      );
    expect(await order()).toEqual([never.title, late.title, soon.title]);
    await page.getByRole('navigation', { name: 'Sort' }).getByRole('link', { name: 'Deadline soonest' }).click();
    await page.waitForURL((u) => u.searchParams.get('sort') === 'deadline');
    expect(await order()).toEqual([soon.title, late.title, never.title]);
    await page.reload();
    expect(await page.getByRole('link', { name: 'Deadline soonest' }).getAttribute('aria-current')).toBe('page');
    await checked(page, 'approvals-inbox-deadline');

    // A second tab, opened now: it still lists `late` after it is decided below.
    const stale = await context.newPage();
    await stale.goto(`${env.url}/console/approvals?sort=deadline`);

    // Two at once: each its own decision and audit entry; back here, order kept, with the summary.
    await page.getByLabel(`Select ${soon.title}`).check();
    await page.getByLabel(`Select ${never.title}`).check();
    await pressInbox(page, 'Approve selected');
    expect(new URL(page.url()).searchParams.get('sort')).toBe('deadline');
    expect(await page.getByRole('status').textContent()).toBe('2 approved.');
    expect(await navCount(page)).toBe(waiting - 2);
    expect(await apiCount()).toBe(waiting - 2);
    await checked(page, 'approvals-inbox-summary');
    for (const run of [soon, never]) {
      const v1 = await env.api(`/api/v1/approvals/${run.approvalId}`);
      expect(v1.body).toMatchObject({ status: 'APPROVED', decision: 'approve' });
      expect(v1.body.history).toEqual([expect.objectContaining({ outcome: 'decided', decision: 'approve', channel: 'console' })]);
      expect((await settled(run.executionId)).body.status).toBe('SUCCEEDED');
    }

    // `formed` needs its form to be approved: "Approve selected" leaves it out; a rejection needs none (its row's Reject).
    const formedRow = page.getByRole('row').filter({ has: page.getByRole('link', { name: formed.title, exact: true }) });
    expect(await formedRow.getByRole('link', { name: /^Needs its form: open it/ }).count()).toBe(1);
    expect(await page.getByText('An approval marked "Needs its form"').isVisible()).toBe(true);
    await page.getByLabel(`Select ${formed.title}`).check();
    await pressInbox(page, 'Approve selected');
    expect(await page.getByRole('status').textContent()).toBe('1 needs its form: open it to approve.');
    expect((await env.api(`/api/v1/approvals/${formed.approvalId}`)).body).toMatchObject({ status: 'PENDING', history: [] });
    await pressInbox(page, `Reject ${formed.title}`);
    expect(await page.getByRole('status').textContent()).toBe('1 rejected.');
    expect((await env.api(`/api/v1/approvals/${formed.approvalId}`)).body).toMatchObject({ status: 'REJECTED', decision: 'reject' });
    await pressInbox(page, `Approve ${late.title}`);
    expect(await page.getByRole('status').textContent()).toBe('1 approved.');

    // The tab opened before: both were decided meanwhile; approving them changes neither.
    await stale.getByLabel(`Select ${late.title}`).check();
    await stale.getByLabel(`Select ${formed.title}`).check();
    await pressInbox(stale, 'Approve selected');
    expect(await stale.getByRole('status').textContent()).toBe('2 already decided: nothing changed for them.');
    await checked(stale);
    const lateNow = (await env.api(`/api/v1/approvals/${late.approvalId}`)).body;
    expect(lateNow).toMatchObject({ status: 'APPROVED', decision: 'approve' });
    expect(lateNow.history.map((h: { outcome: string; code?: string }) => `${h.outcome} ${h.code ?? ''}`.trim())).toEqual([
      'decided',
      'refused APPROVAL_ALREADY_HANDLED',
    ]);
    expect((await env.api(`/api/v1/approvals/${formed.approvalId}`)).body).toMatchObject({ status: 'REJECTED', decision: 'reject' });
    expectNoCspViolations(context);
    await context.close();
  }, 300_000);

  it("a member's inbox form cannot decide an approval they do not review: refused, nothing changes", async () => {
    const run = await approvalRun({ title: `Admins only ${Date.now().toString(36)}` });
    const { context, page } = await asMember();
    await page.goto(`${env.url}/console/approvals`);
    expect(await page.getByRole('link', { name: run.title }).count()).toBe(0);
    const csrf = await page.locator('input[name="csrf"]').first().inputValue();
    const posted = await page.request.post(`${env.url}/console/approvals`, {
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      data: new URLSearchParams([
        ['csrf', csrf],
        ['approvalId', run.approvalId],
        ['decision', 'approve'],
      ]).toString(),
      maxRedirects: 0,
    });
    expect(posted.status()).toBe(303);
    await page.goto(new URL(posted.headers().location as string, env.url).toString());
    expect(await page.getByRole('status').textContent()).toBe('1 not yours to decide: nothing recorded.');
    await checked(page);
    const v1 = await env.api(`/api/v1/approvals/${run.approvalId}`);
    expect(v1.body.status).toBe('PENDING');
    expect(v1.body.history.filter((h: { outcome: string }) => h.outcome === 'decided')).toEqual([]);
    expectNoCspViolations(context);
    await context.close();
  }, 180_000);
});
