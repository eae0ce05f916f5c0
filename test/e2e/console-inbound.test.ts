import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pageExecutions } from '../../shared/domain/executions.ts';
import { createWebhook } from '../../shared/domain/webhooks.ts';
import { createWorkflow } from '../../shared/domain/workflows.ts';
import {
  consoleContext,
  consoleStack,
  DESKTOP,
  expectAccessibleAtBothWidths,
  expectNoCspViolations,
  shot,
  signIn,
} from '../support/console-browser.ts';
import { adminSession, givenAccount } from '../support/fixtures.ts';

/**
 * A webhook's inbound log in the console, in a browser: an accepted request and two refused ones (a bad
 * API key, bad JSON) sent to the demo's webhook, listed from the webhook's page newest first with the
 * refusal's code and reason; a refused request's page with its headers masked and its hostile header
 * and body shown as text; the accepted one replayed (audited, once) landing on its new run, and a
 * replay refused by the webhook's current configuration shown on the request's page; another account's
 * webhook, and an unknown request, as a 404 page. Every page: axe (WCAG 2.1 A/AA) at 1280 and 390 px, no CSP violation.
 */

let env: Awaited<ReturnType<typeof consoleStack>>;
let browser: Browser;
let context: BrowserContext;
let page: Page;

/** Markup a sender put in a header and in a body: shown as text, never as elements. */
const HOSTILE_HEADER = '<img src=x onerror="window.__pwned=1">&amp;';
const HOSTILE_BODY = '{"note": "</pre><script>window.__pwned=1</script><b>bold</b>", oops}';
/** Each test opens several pages, each checked by axe twice, on a machine other tests share: time enough. */
const TEST_MS = 180_000;
const FAKE_KEY = `dyk_${'0123456789abcdefghjkmnpqrs'}_${'A'.repeat(49)}`;

beforeAll(async () => {
  env = await consoleStack('console-inbound', { demoRun: false });
  browser = env.browser;
  context = await consoleContext(browser, { viewport: DESKTOP });
  page = await context.newPage();
  // Pages load slowly on a machine other tests share: a navigation's and an action's wait, not an assertion of time.
  page.setDefaultTimeout(60_000);
  page.on('dialog', (d) => {
    throw new Error(`a dialog opened: ${d.message()}`);
  });
  await signIn(page, env.url, env.demo.adminEmail, env.demo.adminPassword);
}, TEST_MS);
afterAll(async () => env?.stop());

const textOf = async (l: Locator) => ((await l.textContent()) ?? '').trim();
const h1 = () => textOf(page.getByRole('heading', { level: 1 }));
const shown = (l: Locator) => l.first().waitFor({ state: 'visible', timeout: 30_000 });

/** Do `act` (a click) and wait for the document it navigates to (after a POST's 303: the page it leads to). */
async function navigating(act: Promise<unknown>) {
  const [res] = await Promise.all([
    page.waitForResponse((r) => r.request().isNavigationRequest() && r.request().frame() === page.mainFrame() && r.status() !== 303),
    act,
  ]);
  await page.waitForLoadState('load');
  return res;
}

/** Axe and the CSP on the page as it is, at 1280 and at 390 px; screenshots of both under `name`. */
async function checked(name?: string) {
  await expectAccessibleAtBothWidths(page, name);
  expectNoCspViolations(context);
}

/** A request to the demo webhook's trigger URL, as a sender sends it. */
const trigger = (headers: Record<string, string>, body: string) =>
  fetch(`${env.url}/api/webhooks/${env.demo.webhookId}/trigger`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
  });

let token: string | undefined;
async function adminToken() {
  if (!token) {
    const login = await env.api('/api/auth/login', { json: { email: env.demo.adminEmail, password: env.demo.adminPassword } });
    token = login.body.token as string;
  }
  return token;
}

const requestsUrl = () => `${env.url}/console/webhooks/${env.demo.webhookId}/requests`;
const rows = () =>
  page
    .getByRole('table')
    .getByRole('row')
    .filter({ has: page.getByRole('cell') });
let acceptedRun: string;

describe('the inbound log', () => {
  it(
    "lists the webhook's requests from its page, newest first: accepted with its run, refused with the code and why",
    async () => {
      const good = await trigger({ authorization: `Bearer ${env.demo.apiKey}` }, '{"env":"staging"}');
      expect(good.status).toBe(200);
      acceptedRun = ((await good.json()) as { executionId: string }).executionId;
      const badJson = await trigger({ authorization: `Bearer ${env.demo.apiKey}`, 'x-note': HOSTILE_HEADER }, HOSTILE_BODY);
      expect(badJson.status).toBe(400);
      const badKey = await trigger({ authorization: `Bearer ${FAKE_KEY}` }, '{"env":"production"}');
      expect(badKey.status).toBe(401);

      await page.goto(`${env.url}/console/webhooks/${env.demo.webhookId}`);
      await navigating(page.getByRole('link', { name: 'Requests to this webhook' }).click());
      expect(new URL(page.url()).pathname).toBe(`/console/webhooks/${env.demo.webhookId}/requests`);
      expect(await h1()).toBe('Requests to Demo deploy hook');
      expect(await rows().count()).toBe(3);
      const [keyRow, jsonRow, goodRow] = [rows().nth(0), rows().nth(1), rows().nth(2)];
      const cells = async (row: Locator) => (await row.getByRole('cell').allTextContents()).map((t) => t.trim());
      const [, keyOutcome, keyStatus, keyRun, , keyIp] = await cells(keyRow);
      expect(keyOutcome).toMatch(/^refused INVALID_API_KEY\s*The API key is malformed, revoked or expired/);
      expect([keyStatus, keyRun]).toEqual(['401', 'none']);
      expect(keyIp).toMatch(/^(127\.0\.0\.1|::1|::ffff:127\.0\.0\.1)$/);
      const [, jsonOutcome, jsonStatus, , jsonSize] = await cells(jsonRow);
      expect(jsonOutcome).toMatch(/^refused INVALID_JSON\s*The body is not JSON\.$/);
      expect(jsonStatus).toBe('400');
      expect(jsonSize).toBe(`${Buffer.byteLength(HOSTILE_BODY)} B`);
      const [received, goodOutcome, goodStatus, goodRun, goodSize] = await cells(goodRow);
      expect(received).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/);
      expect([goodOutcome, goodStatus, goodRun, goodSize]).toEqual([
        'accepted',
        '200',
        acceptedRun,
        `${Buffer.byteLength('{"env":"staging"}')} B`,
      ]);
      await shown(goodRow.getByRole('link', { name: acceptedRun }));
      // The refusals counted by code over the log's life.
      await shown(
        page.getByText(/Refused since the webhook was created: (INVALID_API_KEY 1, INVALID_JSON 1|INVALID_JSON 1, INVALID_API_KEY 1)\./),
      );
      await checked('webhook-requests');
      await shot(page, 'webhook-requests', 'dark');
    },
    TEST_MS,
  );

  it(
    "shows a refused request's headers as recorded (credentials masked) and its hostile header and body as text; it offers no replay",
    async () => {
      await page.goto(requestsUrl());
      await navigating(rows().filter({ hasText: 'INVALID_JSON' }).getByRole('link', { name: /UTC$/ }).click());
      expect(await h1()).toMatch(/^Request rq_[0-9a-z]{26}$/);
      await shown(page.getByText('The body is not JSON.'));
      const header = (name: string) =>
        page
          .getByRole('row')
          .filter({ has: page.getByRole('cell', { name, exact: true }) })
          .getByRole('cell')
          .nth(1);
      expect(await textOf(header('x-note'))).toBe(HOSTILE_HEADER);
      // The API key's id, never its secret.
      const auth = await textOf(header('authorization'));
      expect(auth).toMatch(/^Bearer dyk_[0-9a-z]+_\*\*\*$/);
      expect(auth).not.toContain(env.demo.apiKey.split('_').at(-1) as string);
      expect(await textOf(page.locator('pre.value'))).toBe(HOSTILE_BODY);
      // Shown as text: no element of the sender's markup, no script run.
      expect(await page.locator('main script, main img, main b').count()).toBe(0);
      expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
      expect(await page.getByRole('button', { name: 'Replay' }).count()).toBe(0);
      await shown(page.getByText(/It cannot be replayed/));
      await checked('webhook-request-refused');
    },
    TEST_MS,
  );

  it(
    'replays the accepted request: the new run of it (on the audit log), and once more only from a new page',
    async () => {
      await page.goto(requestsUrl());
      await navigating(rows().filter({ hasText: 'accepted' }).getByRole('link', { name: /UTC$/ }).click());
      expect(await h1()).toBe(`Request ${acceptedRun}`);
      await shown(page.getByRole('link', { name: acceptedRun }));
      expect(await textOf(page.locator('pre.value'))).toBe('{"env":"staging"}');
      await checked('webhook-request-accepted');
      const res = await navigating(page.getByRole('button', { name: 'Replay' }).click());
      expect(res.status()).toBe(200);
      const replayed = /\/console\/runs\/(ex_[0-9a-z]+)$/.exec(new URL(page.url()).pathname)?.[1] as string;
      expect(replayed).toMatch(/^ex_/);
      expect(replayed).not.toBe(acceptedRun);
      const run = await env.api(`/api/v1/executions/${replayed}`);
      expect(run.status).toBe(200);
      expect(run.body).toMatchObject({ webhookId: env.demo.webhookId, trigger: 'webhook', replayOf: acceptedRun });
      const audit = await env.api('/api/audit?action=webhook.request_replayed', { auth: await adminToken() });
      expect(audit.status).toBe(200);
      expect(audit.body.items).toHaveLength(1);
      expect(audit.body.items[0]).toMatchObject({
        channel: 'console',
        object: { type: 'webhook', id: env.demo.webhookId },
        details: { requestId: acceptedRun, executionId: replayed },
      });
      // A replay is no request the webhook received: the log still holds three.
      await page.goto(requestsUrl());
      expect(await rows().count()).toBe(3);
      expectNoCspViolations(context);
    },
    TEST_MS,
  );

  it(
    "shows a replay the webhook's current configuration refuses on the request's page, and starts nothing",
    async () => {
      const disable = await env.api(`/api/webhooks/${env.demo.webhookId}`, {
        method: 'PUT',
        json: { enabled: false },
        auth: await adminToken(),
      });
      expect(disable.status).toBe(200);
      const before = (await env.api(`/api/v1/executions?workflowId=${env.demo.workflowId}`)).body.items.length as number;
      await page.goto(`${requestsUrl()}/${acceptedRun}`);
      const res = await navigating(page.getByRole('button', { name: 'Replay' }).click());
      expect(res.status()).toBe(409);
      expect(await h1()).toBe(`Request ${acceptedRun}`);
      expect(await textOf(page.getByRole('alert'))).toMatch(/^Not replayed: Webhook wh_[0-9a-z]+ is disabled\.$/);
      expect((await env.api(`/api/v1/executions?workflowId=${env.demo.workflowId}`)).body.items.length).toBe(before);
      await checked('webhook-replay-refused');
      const enable = await env.api(`/api/webhooks/${env.demo.webhookId}`, {
        method: 'PUT',
        json: { enabled: true },
        auth: await adminToken(),
      });
      expect(enable.status).toBe(200);
    },
    TEST_MS,
  );

  it(
    "answers another account's webhook, and a request the log does not hold, with a 404 page; a replay of theirs changes nothing",
    async () => {
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
      const accepted = await fetch(`${env.url}/api/webhooks/${theirs.webhookId}/trigger`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      });
      expect(accepted.status).toBe(200);
      const theirRun = ((await accepted.json()) as { executionId: string }).executionId;
      for (const path of [
        `${theirs.webhookId}/requests`,
        `${theirs.webhookId}/requests/${theirRun}`,
        // Their run is no request of my webhook; an id of no request's shape is none either.
        `${env.demo.webhookId}/requests/${theirRun}`,
        `${env.demo.webhookId}/requests/rq_${'0'.repeat(26)}`,
        `${env.demo.webhookId}/requests/nonsense`,
        `wh_${'0'.repeat(26)}/requests`,
      ]) {
        const res = await page.goto(`${env.url}/console/webhooks/${path}`);
        expect(res?.status(), path).toBe(404);
        expect(await page.getByText('theirs').count()).toBe(0);
      }
      await checked('webhook-request-404');

      // The replay form's fields (its CSRF token among them), posted to their webhook's request: 404, no run.
      await page.goto(`${requestsUrl()}/${acceptedRun}`);
      const fields = await page
        .locator('form[action$="/replay"] input[type="hidden"]')
        .evaluateAll((inputs) => Object.fromEntries(inputs.map((i) => [(i as HTMLInputElement).name, (i as HTMLInputElement).value])));
      expect(Object.keys(fields).length).toBe(2);
      const post = await page.request.post(`${env.url}/console/webhooks/${theirs.webhookId}/requests/${theirRun}/replay`, {
        form: fields,
        maxRedirects: 0,
      });
      expect(post.status()).toBe(404);
      const theirRuns = await pageExecutions(other.account.accountId, { workflowId: wf.workflowId }, 10, undefined);
      expect(theirRuns.items.map((e) => e.executionId)).toEqual([theirRun]);
    },
    TEST_MS,
  );
});
