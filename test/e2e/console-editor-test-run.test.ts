import { createServer, type Server } from 'node:http';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consoleContext, consoleStack, expectAccessible, expectNoCspViolations, shot, signIn } from '../support/console-browser.ts';

/**
 * The editor's "Test run" in a browser (issue 45): the sample input prefilled from the draft's
 * variables' defaults; the DRAFT (not the saved version) run on the test-run engine, with scripts (htmx
 * swaps the check and the result in) and without (the form posts and the editor comes back with the
 * draft as typed); the result's status, output or error, and its path marked on the draft's graph and
 * listed in words. A step with an effect fails the test run with the engine's MOCK_MISSING, and
 * nothing is saved, started or sent. Every page: axe at 1280 and 390 px, no CSP violation.
 */

let env: Awaited<ReturnType<typeof consoleStack>>;
let browser: Browser;
let token: string;
let workflowId: string;
/** A server the draft's http_request would call: it must see no request. */
let target: Server;
let hits = 0;

const XSS = '<img src=x onerror=alert(1)>';
const pretty = (v: unknown) => JSON.stringify(v, null, 2);
const SAVED = { steps: [{ id: 'only', type: 'set', values: {} }] };
const DRAFT = {
  variables: { who: { type: 'string', default: 'world' }, n: { type: 'number', default: 2 } },
  steps: [
    { id: 'greet', type: 'set', values: { greeting: "{% 'Hello, ' & $vars.who %}" } },
    { id: 'route', type: 'switch', cases: [{ when: '{% $vars.n > 5 %}', next: 'big' }], default: 'small' },
    { id: 'big', type: 'set', values: { size: 'big' }, next: '$end' },
    { id: 'small', type: 'set', values: { size: 'small' } },
  ],
  output: "{% { 'greeting': $vars.greeting, 'size': $vars.size } %}",
};
const withCall = (url: string) => ({
  steps: [
    { id: 'prepare', type: 'set', values: { ok: true } },
    { id: 'notify', type: 'http_request', method: 'POST', url, body: { hello: 'world' } },
    { id: 'after', type: 'set', values: { done: true } },
  ],
});

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

async function accessibleAtBothWidths(page: Page) {
  await page.setViewportSize({ width: 1280, height: 900 });
  await expectAccessible(page);
  await page.setViewportSize({ width: 390, height: 844 });
  await expectAccessible(page);
  await page.setViewportSize({ width: 1280, height: 900 });
}

/** The workflow as stored, and its runs: a test run changes neither. */
async function unchanged() {
  const w = await env.api(`/api/workflows/${workflowId}`, { auth: token });
  expect(w.body.version).toBe(1);
  expect(w.body.definition).toEqual(SAVED);
  expect((await env.api(`/api/v1/executions?workflowId=${workflowId}`)).body.items).toEqual([]);
}

/** Whether the draft's graph marks a step as on the test run's path. */
const taken = (page: Page, step: string) => page.locator(`svg.graph g.node.taken[data-step="${step}"]`).count();

beforeAll(async () => {
  target = createServer((_req, res) => {
    hits++;
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
  await new Promise<void>((r) => target.listen(0, '127.0.0.1', r));
  process.env.HTTP_STEP_ALLOWLIST = '127.0.0.1/32';
  env = await consoleStack('console-editor-test-run');
  browser = env.browser;
  const login = await env.api('/api/auth/login', { json: { email: env.demo.adminEmail, password: env.demo.adminPassword } });
  expect(login.status).toBe(200);
  token = login.body.token;
  const created = await env.api('/api/workflows', { auth: token, json: { name: 'Greeter', definition: SAVED } });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  workflowId = created.body.id;
  // The console's functions loaded once before the first browser waits on them (a busy machine's first import is slow).
  expect((await fetch(`${env.url}/console/login`)).status).toBe(200);
}, 120_000);
afterAll(async () => {
  await env?.stop();
  target?.close();
});

describe('the editor\'s "Test run"', { timeout: 240_000 }, () => {
  it("with scripts: runs the draft with the sample input and marks its path on the draft's graph; nothing saved or started", async () => {
    const { context, page } = await signedIn();
    await page.goto(`${env.url}/console/workflows/${workflowId}/edit`);
    await page.getByLabel('Definition', { exact: true }).fill(pretty(DRAFT));
    await page.getByRole('region', { name: 'No errors: the definition is valid' }).waitFor();
    await page.getByLabel('Sample input (JSON)').fill(pretty({ who: XSS, n: 9 }));
    await page.getByRole('button', { name: 'Test run', exact: true }).click();
    const result = page.getByRole('region', { name: 'Test run: SUCCEEDED' });
    await result.waitFor();
    // Swapped in: the same page, the draft as typed.
    expect(new URL(page.url()).pathname).toBe(`/console/workflows/${workflowId}/edit`);
    expect(JSON.parse(await page.locator('#wf-definition').inputValue())).toEqual(DRAFT);
    const text = (await result.textContent()) ?? '';
    expect(text).toContain('greet → route → big');
    expect(text).toContain(`Hello, ${XSS}`);
    expect(await page.locator('main img').count()).toBe(0);
    // On the graph: the executed steps marked (and named in the graph's label), the one skipped not.
    expect(await taken(page, 'greet')).toBe(1);
    expect(await taken(page, 'big')).toBe(1);
    expect(await taken(page, 'small')).toBe(0);
    expect(await page.getByRole('img', { name: "Graph of the draft with the test run's path: greet, route, big" }).count()).toBe(1);
    await accessibleAtBothWidths(page);
    await shot(page, 'editor-test-run');
    await shot(page, 'editor-test-run', 'dark');
    await unchanged();
    expectNoCspViolations(context);
    await context.close();
  });

  it('without scripts: the form posts the draft and the editor comes back with the result; a step with an effect fails with MOCK_MISSING, nothing sent', async () => {
    const { context, page } = await signedIn({ javaScriptEnabled: false });
    await page.goto(`${env.url}/console/workflows/${workflowId}/edit`);
    // The sample starts from the draft's variables' defaults (the saved one declares none).
    expect(JSON.parse(await page.getByLabel('Sample input (JSON)').inputValue())).toEqual({});
    const draft = pretty(withCall(`http://127.0.0.1:${(target.address() as { port: number }).port}/hook`));
    await page.getByLabel('Definition', { exact: true }).fill(draft);
    await Promise.all([page.waitForNavigation({ waitUntil: 'load' }), page.getByRole('button', { name: 'Test run', exact: true }).click()]);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Edit Greeter');
    expect(await page.getByLabel('Definition', { exact: true }).inputValue()).toBe(draft);
    const result = page.getByRole('region', { name: 'Test run: FAILED' });
    const text = (await result.textContent()) ?? '';
    expect(text).toContain('MOCK_MISSING');
    expect(text).toContain('notify');
    expect(text).toContain('prepare → notify');
    expect(await taken(page, 'prepare')).toBe(1);
    expect(await taken(page, 'after')).toBe(0);
    expect(hits).toBe(0);
    // (axe needs scripts: the result's page is checked with them in the test above.)
    await shot(page, 'editor-test-run-failed');

    // A sample that is not a JSON object: not run, said so.
    await page.getByLabel('Sample input (JSON)').fill('[1, 2]');
    await Promise.all([page.waitForNavigation({ waitUntil: 'load' }), page.getByRole('button', { name: 'Test run', exact: true }).click()]);
    expect(await page.getByRole('region', { name: 'Test run: not run' }).textContent()).toContain('Sample input: must be a JSON object');
    // A sample of the wrong type for a declared variable: the engine's error, at the sample.
    await page.getByLabel('Definition', { exact: true }).fill(pretty(DRAFT));
    await page.getByLabel('Sample input (JSON)').fill('{"n": "many"}');
    await Promise.all([page.waitForNavigation({ waitUntil: 'load' }), page.getByRole('button', { name: 'Test run', exact: true }).click()]);
    expect(await page.getByRole('region', { name: 'Test run: not run' }).textContent()).toContain('Sample input.n: must be a number');
    await unchanged();
    expect(hits).toBe(0);
    expectNoCspViolations(context);
    await context.close();
  });
});
