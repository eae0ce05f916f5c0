import { createServer, type Server } from 'node:http';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorkflow } from '../../shared/domain/workflows.ts';
import { WorkflowDefinition } from '../../shared/engine/definition.ts';
import { startRun } from '../../shared/engine/runs.ts';
import { consoleContext, consoleStack, expectAccessible, expectNoCspViolations, shot, signIn } from '../support/console-browser.ts';
import { givenAccount } from '../support/fixtures.ts';

/**
 * A run's page in a browser, as a user reads and acts on it: the run of a workflow that loops
 * (`for_each`), branches (`switch`), retries a request and waits for an approval; its timeline and
 * the same rows as a table; "Show all"; events paged; cancel, retry; another account's run; CSRF.
 */

const XSS = '<img src=x onerror=alert(1)>';
const END = 'END-OF-THE-LONG-VALUE';

// A local target for the http_request steps: `/flaky/<n>/<tag>` answers 503 to its first n requests, then 200.
let target: Server;
let base: string;
const hits = new Map<string, number>();

let env: Awaited<ReturnType<typeof consoleStack>>;
let browser: Browser;
let token: string;
let userId: string;

const tour = (flaky: string) => ({
  variables: {
    env: { type: 'string', default: 'staging' },
    note: { type: 'string', default: '' },
    regions: { type: 'array', default: ['eu', 'us', 'ap'] },
  },
  steps: [
    { id: 'prepare', type: 'set', values: { long: `{% $pad('', 5000, 'x') & '${END}' %}` } },
    { id: 'route', type: 'switch', cases: [{ when: "{% $vars.env = 'production' %}", next: 'guard' }], default: 'regions' },
    { id: 'guard', type: 'fail', message: 'not in production', code: 'NOT_HERE' },
    {
      id: 'regions',
      type: 'for_each',
      items: '{% $vars.regions %}',
      steps: [{ id: 'ping', type: 'set', values: { region: '{% $item %}' } }],
    },
    {
      id: 'call',
      type: 'http_request',
      url: `${base}${flaky}`,
      timeoutMs: 2000,
      retry: { maxAttempts: 4, intervalSeconds: 1, backoffRate: 1, jitter: 'none' },
    },
    { id: 'approve', type: 'manual_approval', title: 'Ship it?', reviewers: ['role:admin'], timeoutSeconds: 3600 },
    { id: 'report', type: 'artifact', name: 'report.json', content: "{% { 'note': $vars.note } %}" },
  ],
  output: "{% { 'note': $vars.note, 'region': $vars.region } %}",
});

let tags = 0;
const tag = () => `${++tags}-${Date.now()}`;

async function createFlow(name: string, definition: unknown): Promise<string> {
  const res = await fetch(`${env.url}/api/workflows`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name, definition }),
  });
  const body = (await res.json()) as { id: string };
  expect(res.status, JSON.stringify(body)).toBe(201);
  return body.id;
}

async function start(workflowId: string, variables: Record<string, unknown> = {}): Promise<string> {
  const res = await env.api(`/api/v1/workflows/${workflowId}/runs`, { json: { variables } });
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  return res.body.executionId as string;
}

const run = async (id: string) => (await env.api(`/api/v1/executions/${id}`)).body;

async function until(id: string, statuses: string[], timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await run(id);
    if (statuses.includes(r.status)) return r;
    if (Date.now() > deadline) throw new Error(`run ${id} is ${r.status}, not ${statuses.join(' or ')}`);
    await new Promise((res) => setTimeout(res, 150));
  }
}

async function approveWhenWaiting(id: string, waitMs: number) {
  const r = await until(id, ['WAITING_APPROVAL']);
  await new Promise((res) => setTimeout(res, waitMs));
  const decided = await env.api(`/api/v1/approvals/${r.approvalId}/approve`, { json: { comment: 'ok' } });
  expect(decided.status, JSON.stringify(decided.body)).toBe(200);
}

async function signedIn(): Promise<{ context: BrowserContext; page: Page }> {
  const context = await consoleContext(browser);
  const page = await context.newPage();
  page.on('dialog', () => {
    throw new Error('a dialog opened: a value ran as script');
  });
  await signIn(page, env.url, env.demo.adminEmail, env.demo.adminPassword);
  return { context, page };
}

beforeAll(async () => {
  target = createServer((req, res) => {
    const path = req.url ?? '/';
    const n = (hits.get(path) ?? 0) + 1;
    hits.set(path, n);
    const [, kind, arg] = path.split('/');
    if (kind === 'flaky' && n <= Number(arg)) return void res.writeHead(503).end('busy');
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ok: true, attempt: n }));
  });
  await new Promise<void>((r) => target.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(target.address() as { port: number }).port}`;
  // The http_request steps may call the local target (the SSRF policy refuses loopback otherwise).
  process.env.HTTP_STEP_ALLOWLIST = '127.0.0.1/32';
  env = await consoleStack('console-run');
  browser = env.browser;
  const login = await fetch(`${env.url}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: env.demo.adminEmail, password: env.demo.adminPassword }),
  });
  token = ((await login.json()) as { token: string }).token;
  userId = (await env.api('/api/v1/me')).body.userId;
});
afterAll(async () => {
  await env?.stop();
  target?.closeAllConnections();
  target?.close();
});

describe('the run page', { timeout: 60_000 }, () => {
  it('shows a run that looped, branched, retried a request and waited for an approval: timeline, table, path, values, artifacts', async () => {
    const workflowId = await createFlow('Tour of the engine', tour(`/flaky/2/${tag()}`));
    const id = await start(workflowId, { note: XSS });
    await approveWhenWaiting(id, 1200);
    await until(id, ['SUCCEEDED']);

    const { context, page } = await signedIn();
    await page.goto(`${env.url}/console/runs/${id}`);
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe(`Run ${id}`);
    expect(await page.getByRole('link', { name: 'Tour of the engine' }).getAttribute('href')).toBe(`/console/workflows/${workflowId}`);
    expect(await page.getByText('SUCCEEDED').first().isVisible()).toBe(true);

    // The timeline: a bar per executed step (the loop's body once per item), each with a title naming its step.
    const timeline = page.getByRole('img', { name: new RegExp(`Timeline of run ${id}`) });
    const titles = await timeline.locator('title').allTextContents();
    const stepsOf = (texts: string[]) => texts.map((t) => t.split(':')[0]);
    expect(stepsOf(titles)).toEqual([
      'prepare',
      'route',
      'regions',
      'ping (iteration 1)',
      'ping (iteration 2)',
      'ping (iteration 3)',
      'call',
      'approve',
      'report',
    ]);
    const call = titles.find((t) => t.startsWith('call:')) as string;
    expect(call).toMatch(/SUCCEEDED, .*3 attempts, waited to retry 1 s, waited to retry 1 s/);
    const approve = titles.find((t) => t.startsWith('approve:')) as string;
    const waited = /waited for its approval (\d+ s)/.exec(approve)?.[1] as string;
    expect(waited).toBeDefined();
    // On the compressed axis waits are drawn at a fixed width, their duration written on them.
    await page.getByRole('link', { name: 'Compressed' }).click();
    await page.waitForURL((u) => u.searchParams.get('time') === 'compressed');
    const compressed = page.getByRole('img', { name: new RegExp(`Timeline of run ${id} \\(compressed\\)`) });
    expect(await compressed.getByText(waited, { exact: true }).count()).toBeGreaterThan(0);

    // The same rows as a table.
    const table = page.getByRole('table', { name: "The timeline's steps" });
    const rows = table.getByRole('row');
    expect(await rows.count()).toBe(titles.length + 1);
    expect(await table.getByRole('rowheader').allTextContents()).toEqual(titles.map((t) => t.split(/[ :]/)[0]));
    const callRow = table.getByRole('row').filter({ has: page.getByRole('rowheader', { name: 'call' }) });
    expect(await callRow.getByRole('cell').last().textContent()).toBe('3');

    // The path the run took: the switch's default went past `guard`.
    const path = await page.getByRole('list', { name: 'Steps the run went through, in order' }).getByRole('listitem').allTextContents();
    expect(path).toEqual(['prepare', 'route', 'regions', 'ping', 'call', 'approve', 'report']);

    // Values show as text, scripts and all.
    expect(await page.getByText(XSS).first().isVisible()).toBe(true);
    expect(await page.getByRole('img', { name: 'x', exact: true }).count()).toBe(0);

    await expectAccessible(page);
    await shot(page, 'run');
    await shot(page, 'run', 'dark');

    // "Show all" loads the whole of a long output in place.
    const prepare = page.locator('details', { has: page.getByText('prepare', { exact: true }) }).first();
    await prepare.getByText('prepare', { exact: true }).click();
    const output = prepare.getByRole('region', { name: 'Output of prepare' });
    expect(await output.textContent()).not.toContain(END);
    await output.getByRole('link', { name: 'Show all' }).click();
    await expect.poll(() => output.textContent()).toContain(END);
    await expectAccessible(page);

    // The artifact downloads through the console (a redirect to its presigned URL).
    const link = page.getByRole('link', { name: 'report.json' });
    const res = await context.request.get(`${env.url}${await link.getAttribute('href')}`);
    expect(res.status()).toBe(200);
    expect(JSON.parse(await res.text())).toEqual({ note: XSS });

    expectNoCspViolations(context);
    await context.close();
  });

  it('pages the events, and draws a long loop with its first iterations and a count of the rest', async () => {
    const workflowId = await createFlow('Many regions', tour(`/flaky/0/${tag()}`));
    const regions = Array.from({ length: 40 }, (_, i) => `r${i}`);
    const id = await start(workflowId, { regions });
    await approveWhenWaiting(id, 0);
    await until(id, ['SUCCEEDED']);

    const { context, page } = await signedIn();
    await page.goto(`${env.url}/console/runs/${id}`);
    const timeline = page.getByRole('img', { name: new RegExp(`Timeline of run ${id}`) });
    const titles = await timeline.locator('title').allTextContents();
    // 20 iterations drawn and the last; the 19 between are one line, in the table too.
    expect(titles.filter((t) => t.startsWith('ping ('))).toHaveLength(21);
    expect(await timeline.getByText('19 more iterations of regions', { exact: false }).count()).toBe(1);
    expect(await page.getByRole('cell', { name: /19 more iterations of regions/ }).count()).toBe(1);

    const events = page.getByRole('table', { name: "The run's events, oldest first" });
    const firstPage = await events.getByRole('row').count();
    expect(firstPage).toBe(51);
    const lastSeqOnFirst = Number(await events.getByRole('row').nth(50).getByRole('cell').first().textContent());
    await page.getByRole('link', { name: 'Next page' }).click();
    await page.waitForURL((u) => u.searchParams.has('cursor'));
    const second = page.getByRole('table', { name: "The run's events, oldest first" });
    const firstSeqOnSecond = Number(await second.getByRole('row').nth(1).getByRole('cell').first().textContent());
    expect(firstSeqOnSecond).toBeGreaterThan(lastSeqOnFirst);
    const all = (await env.api(`/api/v1/executions/${id}/events?limit=100`)).body.items as unknown[];
    expect((await second.getByRole('row').count()) - 1).toBe(all.length - 50);
    expect(await page.getByRole('link', { name: 'Next page' }).count()).toBe(0);
    await expectAccessible(page);
    await shot(page, 'run-events-page-2');
    expectNoCspViolations(context);
    await context.close();
  });
});

describe('a run in progress', { timeout: 60_000 }, () => {
  it('updates its page as it moves on, and an admin redelivers one of its messages', async () => {
    const id = await start(env.demo.workflowId);
    const waiting = await until(id, ['WAITING_APPROVAL']);
    const { context, page } = await signedIn();
    await page.goto(`${env.url}/console/runs/${id}`);
    const status = page.getByRole('definition').first();
    expect(await status.textContent()).toContain('WAITING_APPROVAL');
    expect(await page.getByText('this part of the page updates every 5 seconds').isVisible()).toBe(true);
    await shot(page, 'run-waiting');
    await shot(page, 'run-waiting', 'dark');

    // The approval message to the admins is delivered (the SES emulator takes it).
    const delivered = async () => {
      const items = (await env.api(`/api/v1/executions/${id}/deliveries`)).body.items as {
        deliveryId: string;
        state: string;
        attempts: unknown[];
      }[];
      return items.find((d) => d.state === 'DELIVERED');
    };
    await expect.poll(delivered, { timeout: 15_000 }).toBeDefined();

    const decided = await env.api(`/api/v1/approvals/${waiting.approvalId}/approve`, { json: { formData: { ticket: 'T-1' } } });
    expect(decided.status, JSON.stringify(decided.body)).toBe(200);
    // Without a reload: the summary and the timeline refresh while the run is in progress.
    await expect.poll(() => status.textContent(), { timeout: 15_000 }).toContain('SUCCEEDED');
    expect(await page.getByText('this part of the page updates every 5 seconds').count()).toBe(0);

    await page.reload();
    const first = (await delivered()) as { deliveryId: string; attempts: unknown[] };
    const deliveries = page.getByRole('table', { name: 'Messages sent for the run' });
    await deliveries
      .getByRole('button', { name: /^Redeliver/ })
      .first()
      .click();
    await page.waitForURL((u) => u.pathname === `/console/runs/${id}`);
    const again = async () =>
      ((await env.api(`/api/v1/executions/${id}/deliveries`)).body.items as { deliveryId: string; attempts: unknown[] }[]).find(
        (d) => d.deliveryId === first.deliveryId,
      )?.attempts.length;
    await expect.poll(again, { timeout: 15_000 }).toBeGreaterThan(first.attempts.length);
    await expectAccessible(page);
    expectNoCspViolations(context);
    await context.close();
  });
});

describe('run actions', { timeout: 60_000 }, () => {
  it('cancels a waiting run after asking, as the signed-in user; without the CSRF token a POST changes nothing', async () => {
    const id = await start(env.demo.workflowId);
    await until(id, ['WAITING_APPROVAL']);
    const { context, page } = await signedIn();

    // A POST without the token is refused, and the run is as it was.
    const forged = await context.request.post(`${env.url}/console/runs/${id}/cancel`, { form: { reason: 'forged' }, maxRedirects: 0 });
    expect(forged.status()).toBe(403);
    expect((await run(id)).status).toBe('WAITING_APPROVAL');

    await page.goto(`${env.url}/console/runs/${id}`);
    expect(await page.getByRole('button', { name: 'Retry' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Resume' }).count()).toBe(0);
    await page.getByRole('button', { name: 'Cancel run' }).click();
    await page.waitForURL((u) => u.pathname === `/console/runs/${id}/cancel`);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Cancel this run?');
    // Asking changed nothing.
    expect((await run(id)).status).toBe('WAITING_APPROVAL');
    await expectAccessible(page);
    await shot(page, 'run-cancel-confirm');
    await page.getByLabel('Reason (optional)').fill('not today');
    await page.getByRole('button', { name: 'Cancel run' }).click();
    await page.waitForURL((u) => u.pathname === `/console/runs/${id}`);
    expect(await page.getByText('CANCELLED').first().isVisible()).toBe(true);
    // Who cancelled it, and why.
    expect(await page.locator('#cancelled-by').textContent()).toBe(`${env.demo.adminEmail} (not today)`);

    const after = await run(id);
    expect(after.status).toBe('CANCELLED');
    const events = (await env.api(`/api/v1/executions/${id}/events`)).body.items as { type: string; data: Record<string, unknown> }[];
    expect(events.find((e) => e.type === 'execution.cancelled')?.data).toMatchObject({
      reason: 'not today',
      from: 'WAITING_APPROVAL',
      by: userId,
    });
    // A finished run offers a rerun, not a cancel.
    expect(await page.getByRole('button', { name: 'Cancel run' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Rerun' }).count()).toBe(1);
    // The confirmation of what the run no longer allows is a 409 page.
    const again = await page.goto(`${env.url}/console/runs/${id}/cancel`);
    expect(again?.status()).toBe(409);
    expectNoCspViolations(context);
    await context.close();
  });

  it('retries a failed run from its page', async () => {
    const once = `/flaky/1/${tag()}`;
    // A workflow named like markup: its name shows as text.
    const workflowId = await createFlow(`Fails once ${XSS}`, {
      steps: [{ id: 'call', type: 'http_request', url: `${base}${once}`, timeoutMs: 2000 }],
    });
    const id = await start(workflowId);
    expect((await until(id, ['FAILED', 'SUCCEEDED'])).status).toBe('FAILED');
    const { context, page } = await signedIn();
    await page.goto(`${env.url}/console/runs/${id}`);
    expect(await page.getByRole('heading', { name: 'Error' }).isVisible()).toBe(true);
    expect(await page.getByRole('link', { name: `Fails once ${XSS}` }).isVisible()).toBe(true);
    await page.getByRole('button', { name: 'Retry' }).click();
    await page.waitForURL((u) => u.pathname === `/console/runs/${id}/retry`);
    await expectAccessible(page);
    await page.getByRole('button', { name: 'Retry' }).click();
    await page.waitForURL((u) => u.pathname === `/console/runs/${id}`);
    expect((await until(id, ['SUCCEEDED'])).retries).toBe(1);
    const events = (await env.api(`/api/v1/executions/${id}/events`)).body.items as { type: string; data: Record<string, unknown> }[];
    expect(events.find((e) => e.type === 'execution.retried')?.data).toMatchObject({ by: userId, stepId: 'call', retry: 1 });
    expect(hits.get(once)).toBe(2);
    await page.reload();
    const titles = await page
      .getByRole('img', { name: /Timeline of run/ })
      .locator('title')
      .allTextContents();
    expect(titles.map((t) => t.split(':')[0])).toEqual(['call', 'call']);
    expect(titles[1]).toContain('retry 1 of the run');
    await shot(page, 'run-retried');
    expectNoCspViolations(context);
    await context.close();
  });
});

describe('what is not yours', { timeout: 60_000 }, () => {
  it("another account's run is the same 404 page as an unknown id, on every run route", async () => {
    const other = await givenAccount();
    const workflow = await createWorkflow(
      { accountId: other.account.accountId, userId: other.admin.userId, role: 'admin' },
      {
        name: 'theirs',
        definition: WorkflowDefinition.parse({ steps: [{ id: 'a', type: 'set', values: { x: 1 } }] }),
        recovery: false,
        editors: [],
      },
    );
    const theirs = (await startRun({ workflow, trigger: 'api', variables: {} })).execution.executionId;
    const unknown = `ex_${'0'.repeat(26)}`;
    const { context, page } = await signedIn();
    const seen = async (id: string, suffix: string) => {
      const res = await page.goto(`${env.url}/console/runs/${id}${suffix}`);
      const text = (await page.getByRole('main').textContent())?.replace(id, '<id>').replace(/Request \S+/, '');
      return { status: res?.status(), text };
    };
    for (const suffix of ['', '/cancel', '/values/variables', '/steps/a/output']) {
      const a = await seen(theirs, suffix);
      expect(a.status, suffix).toBe(404);
      expect(a.text, suffix).toEqual((await seen(unknown, suffix)).text);
    }
    await expectAccessible(page);
    const post = await context.request.post(`${env.url}/console/runs/${theirs}/cancel`, {
      form: { reason: 'mine now' },
      headers: { 'x-csrf-token': (await page.locator('input[name="csrf"]').first().getAttribute('value')) ?? '' },
      maxRedirects: 0,
    });
    expect(post.status()).toBe(404);
    expectNoCspViolations(context);
    await context.close();
  });
});
