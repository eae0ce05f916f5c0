import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser } from '../support/browser.ts';
import { localStackOnSharedEmulators } from '../support/local-stack.ts';
import { eventually } from '../support/engine.ts';

/**
 * The one-click approval link in a real browser (Debian's Chromium headless shell driven by playwright-core) on the
 * local stack with the seeded demo: the confirmation page records nothing, loads nothing from
 * elsewhere, passes its own CSP, fits a phone; its button records the decision and the run finishes.
 */

const PHONE = { width: 390, height: 844 };

let stack: Awaited<ReturnType<typeof localStackOnSharedEmulators>>['stack'];
let demo: { apiKey: string; webhookId: string; workflowId: string; accountId: string };
let browser: Browser | undefined;
let shots: string;

beforeAll(async () => {
  const started = await localStackOnSharedEmulators('browser', { seed: true });
  stack = started.stack;
  const dataDir = started.dataDir;
  shots = mkdtempSync(join(tmpdir(), 'flowgate-browser-shots-'));
  demo = JSON.parse(readFileSync(join(dataDir, 'demo.json'), 'utf8'));
  browser = await launchBrowser();
});
afterAll(async () => {
  try {
    await browser?.close();
  } finally {
    await stack?.stop();
  }
});

const api = async (path: string, init: { method?: string; json?: unknown } = {}) => {
  const res = await fetch(`${stack.url}${path}`, {
    method: init.method ?? (init.json !== undefined ? 'POST' : 'GET'),
    headers: {
      authorization: `Bearer ${demo.apiKey}`,
      ...(init.json !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    body: init.json !== undefined ? JSON.stringify(init.json) : undefined,
  });
  const text = await res.text();
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    body = text;
  }
  return { status: res.status, body };
};

describe('the one-click approval link in chromium', () => {
  it('shows a confirmation page that records nothing, fits a phone, and approves on the button; the run finishes', async () => {
    // A run of the demo workflow, waiting at its approval step.
    const trigger = await api(`/api/webhooks/${demo.webhookId}/trigger`, { json: { env: 'production' } });
    expect(trigger.status, JSON.stringify(trigger.body)).toBe(200);
    const executionId: string = trigger.body.executionId;
    await eventually(
      () => api(`/api/v1/executions/${executionId}`),
      (r) => r.body.status === 'WAITING_APPROVAL',
      60_000,
    );
    const pending = await eventually(
      () => api('/api/v1/approvals'),
      (r) => Array.isArray(r.body.items) && r.body.items.some((a: { executionId: string }) => a.executionId === executionId),
      60_000,
    );
    const approval = pending.body.items.find((a: { executionId: string }) => a.executionId === executionId);
    expect(approval).toMatchObject({ status: 'PENDING', title: 'Deploy to production' });
    const approvalId: string = approval.approvalId;

    const context = await (browser as Browser).newContext({ viewport: PHONE, deviceScaleFactor: 2, isMobile: true, hasTouch: true });
    try {
      const page = await context.newPage();
      const requests: string[] = [];
      const consoleErrors: string[] = [];
      page.on('request', (r) => requests.push(r.url()));
      page.on('console', (m) => {
        if (m.type() === 'error') consoleErrors.push(m.text());
      });
      page.on('pageerror', (e) => consoleErrors.push(`pageerror: ${e.message}`));

      // Opening the link shows what will be decided; nothing is recorded.
      const link = `${stack.url}/api/webhook-trigger/approval/${approvalId}/approve?${new URLSearchParams({ api_key: demo.apiKey })}`;
      const opened = await page.goto(link);
      expect(opened?.status()).toBe(200);
      expect(opened?.headers()['content-security-policy']).toMatch(/default-src 'none'/);
      expect(await page.title()).toBe('Approve: Deploy to production');
      expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Approve: Deploy to production');
      const button = page.getByRole('button', { name: 'Approve' });
      expect(await button.isVisible()).toBe(true);
      const before = await api(`/api/v1/approvals/${approvalId}`);
      expect(before.body.status).toBe('PENDING');
      expect(before.body.history ?? []).toEqual([]);

      // Readable on a phone: the inline style applies (under the CSP), no sideways scroll, a big enough button.
      await page.screenshot({ path: join(shots, 'approval-link-phone.png'), fullPage: true });
      console.info(`approval page screenshot: ${join(shots, 'approval-link-phone.png')}`);
      expect(await page.evaluate<string>("getComputedStyle(document.querySelector('button.approve')).backgroundColor")).toBe(
        'rgb(26, 127, 55)',
      );
      expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(PHONE.width);
      const box = await button.boundingBox();
      expect(box).not.toBeNull();
      if (!box) return;
      expect(box.x).toBeGreaterThanOrEqual(0);
      expect(box.x + box.width).toBeLessThanOrEqual(PHONE.width);
      expect(box.height).toBeGreaterThanOrEqual(44);

      // What is decided, as the console writes it: the workflow by name, the run's inputs, times in UTC.
      const facts = await page.locator('dl').textContent();
      expect(facts).toContain('WorkflowDeploy with approval');
      expect(facts).toContain('env: "production"');
      expect(facts).toMatch(/Requested\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC/);
      expect(facts).toMatch(/Deadline\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC/);
      // The step's form asks for its required ticket: the button does not send the form without it.
      const ticket = page.getByLabel('ticket (required)');
      expect(await ticket.inputValue()).toBe('');
      await button.click();
      expect(await ticket.evaluate((e) => (e as HTMLInputElement).validity.valueMissing)).toBe(true);
      expect((await api(`/api/v1/approvals/${approvalId}`)).body.status).toBe('PENDING');
      // Nor does the one-click GET (confirm=1) approve without it: it shows this same page, with the form.
      const oneClick = await fetch(`${link}&confirm=1`, { headers: { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) Chrome/126.0' } });
      expect(oneClick.status).toBe(200);
      expect(await oneClick.text()).toContain('ticket (required)');
      expect((await api(`/api/v1/approvals/${approvalId}`)).body.status).toBe('PENDING');
      await ticket.fill('CHG-<b>42</b>');

      // The button posts the form and lands on the result page.
      const [posted] = await Promise.all([
        page.waitForResponse((r) => r.request().method() === 'POST' && r.url().includes(`/approval/${approvalId}/approve`)),
        button.click(),
      ]);
      expect(posted.status()).toBe(200);
      expect(new URL(posted.url()).searchParams.get('confirm')).toBe('1');
      await page.waitForLoadState('domcontentloaded');
      expect(await page.title()).toBe('Approved');
      expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Approved');
      expect(await page.locator('body').textContent()).toContain('Recorded.');
      await page.screenshot({ path: join(shots, 'approved-phone.png'), fullPage: true });

      // Everything the pages loaded came from the local server, and the CSP reported nothing.
      expect(requests.length).toBeGreaterThanOrEqual(2);
      for (const url of requests) expect(new URL(url).hostname, url).toBe('127.0.0.1');
      expect(consoleErrors).toEqual([]);
    } finally {
      await context.close();
    }

    // The decision was recorded once, through the link, and the run went on to its artifact step.
    const done = await eventually(
      () => api(`/api/v1/executions/${executionId}`),
      (r) => ['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(r.body.status),
      60_000,
    );
    expect(done.body.status).toBe('SUCCEEDED');
    const decided = await api(`/api/v1/approvals/${approvalId}`);
    expect(decided.body).toMatchObject({ status: 'APPROVED', decision: 'approve' });
    expect(decided.body.history).toEqual([expect.objectContaining({ outcome: 'decided', decision: 'approve', channel: 'link' })]);
    const result = await api(`/api/v1/executions/${executionId}/result`);
    expect(JSON.stringify(result.body)).toContain('CHG-<b>42</b>');
    const artifacts = await api(`/api/v1/executions/${executionId}/artifacts`);
    expect(artifacts.body.items).toEqual([expect.objectContaining({ name: 'report.json', stepId: 'report' })]);
  }, 180_000);
});
