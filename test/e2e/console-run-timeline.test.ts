import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  consoleContext,
  consoleStack,
  expectAccessibleAtBothWidths,
  expectNoCspViolations,
  PHONE,
  SHOTS,
  shot,
  signIn,
} from '../support/console-browser.ts';

/**
 * The run page that does not mislead (issue 44 item 3), as a user reads it: the timeline in real time
 * (the default) and compressed, zoomed; the path graph with each step's status in words and a link to
 * its details; a loop of 60 items whose 35th iteration is opened from the "Iteration" field; who
 * cancelled a run. One stack, two runs made through the API.
 */

const XSS = '<img src=x onerror=alert(1)>';
let env: Awaited<ReturnType<typeof consoleStack>>;
let browser: Browser;
let token: string;

const definition = {
  variables: { items: { type: 'array', default: [] } },
  steps: [
    { id: 'prepare', type: 'set', values: { started: true } },
    {
      id: 'regions',
      type: 'for_each',
      items: '{% $vars.items %}',
      steps: [{ id: 'ping', type: 'set', values: { region: '{% $item %}' } }],
    },
    { id: 'pause', type: 'delay', seconds: 1 },
    { id: 'fetch', type: 'fail', message: 'the upstream said no', code: 'UPSTREAM_NO' },
    { id: 'never', type: 'set', values: { x: 1 } },
  ],
};

async function until(id: string, statuses: string[], timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = (await env.api(`/api/v1/executions/${id}`)).body;
    if (statuses.includes(r.status)) return r;
    if (Date.now() > deadline) throw new Error(`run ${id} is ${r.status}, not ${statuses.join(' or ')}`);
    await new Promise((res) => setTimeout(res, 150));
  }
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

/** The page is no wider than the phone: drawings scroll inside their own wrapper. */
async function fitsThePhone(page: Page) {
  await page.setViewportSize(PHONE);
  expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(PHONE.width);
}

beforeAll(async () => {
  env = await consoleStack('console-run-timeline');
  browser = env.browser;
  const login = await fetch(`${env.url}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: env.demo.adminEmail, password: env.demo.adminPassword }),
  });
  token = ((await login.json()) as { token: string }).token;
});
afterAll(async () => {
  await env?.stop();
});

describe('the run page of a failed run with a loop of 60 items', { timeout: 90_000 }, () => {
  it('draws time to scale or compressed, zooms, names each step of the graph by status, and opens iteration 35 by its number', async () => {
    const created = await fetch(`${env.url}/api/workflows`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Sixty regions', definition }),
    });
    const workflowId = ((await created.json()) as { id: string }).id;
    const items = Array.from({ length: 60 }, (_, i) => (i === 34 ? XSS : `r${i + 1}`));
    const started = await env.api(`/api/v1/workflows/${workflowId}/runs`, { json: { variables: { items } } });
    expect(started.status, JSON.stringify(started.body)).toBe(202);
    const id = started.body.executionId as string;
    expect((await until(id, ['FAILED', 'SUCCEEDED'])).status).toBe('FAILED');

    const { context, page } = await signedIn();
    await page.goto(`${env.url}/console/runs/${id}`);

    // Real time is the default: every bar at its true length, the one-second delay far wider than a set step.
    const axis = page.getByRole('navigation', { name: 'Time axis' });
    expect(await axis.getByRole('link', { name: 'Real time' }).getAttribute('aria-current')).toBe('true');
    expect(await axis.getByRole('link', { name: 'Compressed' }).getAttribute('aria-current')).toBeNull();
    const timeline = page.getByRole('img', { name: /Timeline of run .* \(real time\)/ });
    const width = async (step: string) =>
      timeline.locator('g', { has: page.locator(`title:text-matches("^${step}:")`) }).evaluate((g) => {
        // The bar's drawn pieces and its waits (a delay is all wait).
        const rects = Array.from(g.querySelectorAll(':scope > rect:not(.iter-band), :scope > g > rect'));
        return rects.reduce((n, r) => n + Number(r.getAttribute('width')), 0);
      });
    const prepare = await width('prepare');
    const pause = await width('pause');
    expect(pause).toBeGreaterThan(prepare * 20);
    // A step of a few milliseconds is a tick, and says so.
    expect(await timeline.locator('title', { hasText: /^prepare: .*a tick marks it/ }).count()).toBe(1);

    // Zoom: the drawing gets wider (it scrolls inside its wrapper), the choice kept in the address.
    await page.getByRole('navigation', { name: 'Zoom' }).getByRole('link', { name: '4×' }).click();
    await page.waitForURL((u) => u.searchParams.get('zoom') === '4');
    const zoomed = page.getByRole('img', { name: /Timeline of run .* \(real time, zoom 4×\)/ });
    expect(Number(await zoomed.getAttribute('width'))).toBeGreaterThan(2500);
    await fitsThePhone(page);
    await page.setViewportSize({ width: 1280, height: 800 });

    // Compressed: a labelled option; waits at a fixed width, their duration written.
    await page.getByRole('navigation', { name: 'Time axis' }).getByRole('link', { name: 'Compressed' }).click();
    await page.waitForURL((u) => u.searchParams.get('time') === 'compressed');
    expect(await page.getByRole('link', { name: 'Compressed' }).getAttribute('aria-current')).toBe('true');
    expect(await page.getByRole('img', { name: /Timeline of run .* \(compressed\)/ }).count()).toBe(1);
    expect(await page.getByText(/^Compressed: waits .* are drawn at a fixed width/).isVisible()).toBe(true);
    expect(await page.getByRole('navigation', { name: 'Zoom' }).count()).toBe(0);

    // The graph: the failed step is announced as failed (in words, not by colour alone) and links to its details.
    const failed = page.getByRole('link', { name: 'fetch: failed' });
    expect(await failed.getAttribute('href')).toBe('#step-fetch');
    expect(await failed.textContent()).toContain('✗ failed');
    expect(await page.getByRole('link', { name: 'prepare: succeeded' }).count()).toBe(1);
    expect(await page.getByRole('link', { name: 'never: not reached' }).count()).toBe(1);
    await failed.click();
    await page.waitForURL((u) => u.hash === '#step-fetch');

    // The iteration browser: each iteration's status, a filter, pages of 20.
    const browserOf = page.getByRole('region', { name: 'Iterations of regions (60)' });
    expect(await browserOf.getByRole('link', { name: /^Iteration \d+: succeeded$/ }).count()).toBe(20);
    await browserOf.getByRole('link', { name: 'Next iterations' }).click();
    await page.waitForURL((u) => u.searchParams.get('from') === '20');
    expect(await page.getByRole('link', { name: 'Iteration 21: succeeded' }).count()).toBe(1);
    expect(await page.getByRole('link', { name: 'failed 1' }).count()).toBe(0);
    expect(await page.getByRole('link', { name: 'succeeded 60' }).count()).toBe(1);

    // Iteration 35 of 60, by its number: its step, status and result, its item shown as text.
    await page.getByLabel('Iteration', { exact: true }).fill('35');
    await page.getByRole('button', { name: 'Show iteration' }).click();
    await page.waitForURL((u) => u.searchParams.get('iteration') === '35');
    const details = page.getByRole('region', { name: 'Iteration 35 of regions' });
    expect(await details.getByText('Status:').textContent()).toContain('SUCCEEDED');
    expect(await details.getByRole('link', { name: 'ping' }).getAttribute('href')).toBe('#step-ping');
    expect(await details.getByRole('region', { name: 'Result of iteration 35' }).textContent()).toContain(XSS);
    expect(await page.getByRole('img', { name: 'x', exact: true }).count()).toBe(0);
    // The timeline stays compressed through the jump.
    expect(new URL(page.url()).searchParams.get('time')).toBe('compressed');

    // A number past the loop's end is said so, and the page still answers.
    const past = await page.goto(`${env.url}/console/runs/${id}?iteration=61`);
    expect(past?.status()).toBe(200);
    expect(await page.getByText('there is no iteration 61').isVisible()).toBe(true);
    // Nonsense in the address is a 400 page, not a crash.
    expect((await page.goto(`${env.url}/console/runs/${id}?zoom=3`))?.status()).toBe(400);

    await page.goto(`${env.url}/console/runs/${id}?iteration=35`);
    // The drawings and the browser on their own, at both widths (under SHOTS, to look at).
    const parts = { timeline: '#run-live', path: '#graph', iterations: 'section[aria-labelledby="iterations"]' };
    for (const [size, viewport] of [
      ['', { width: 1280, height: 800 }],
      ['-phone', PHONE],
    ] as const) {
      await page.setViewportSize(viewport);
      for (const [name, part] of Object.entries(parts))
        await page.locator(part).screenshot({ path: join(SHOTS, `run-real-time-${name}${size}.png`) });
    }
    await expectAccessibleAtBothWidths(page, 'run-real-time');
    await fitsThePhone(page);
    await page.setViewportSize({ width: 1280, height: 800 });
    await shot(page, 'run-real-time', 'dark');
    expectNoCspViolations(context);
    await context.close();
  });
});

describe('a cancelled run', { timeout: 60_000 }, () => {
  it('says who cancelled it: the API key that asked', async () => {
    const started = await env.api(`/api/v1/workflows/${env.demo.workflowId}/runs`, { json: { variables: {} } });
    const id = started.body.executionId as string;
    await until(id, ['WAITING_APPROVAL']);
    const cancelled = await env.api(`/api/v1/executions/${id}/cancel`, { json: { reason: 'not today' } });
    expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(200);
    const { context, page } = await signedIn();
    await page.goto(`${env.url}/console/runs/${id}`);
    const by = page.locator('#cancelled-by');
    expect(await page.getByRole('term').filter({ hasText: 'Cancelled by' }).count()).toBe(1);
    expect(await by.textContent()).toMatch(/^API key \S+ \(not today\)$/);
    expectNoCspViolations(context);
    await context.close();
  });
});
