import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consoleContext, consoleStack, expectAccessible, expectNoCspViolations, shot, signIn } from '../support/console-browser.ts';
import { PASSWORD, uniqueEmail } from '../support/fixtures.ts';

/**
 * The audit log page in a browser: what the admin did in the console and through the API is listed
 * with its channel and address, the filters (a GET form) narrow it and show a bad value at its field,
 * "Export NDJSON" answers the same entries, and a member sees only their own. Every page: axe
 * (WCAG 2.1 A/AA), no CSP violation, screenshots light and dark.
 */

let env: Awaited<ReturnType<typeof consoleStack>>;
let browser: Browser;
let token: string;
const member = { email: uniqueEmail('auditee'), password: PASSWORD };

beforeAll(async () => {
  env = await consoleStack('console-audit');
  browser = env.browser;
  const login = await env.api('/api/auth/login', { json: { email: env.demo.adminEmail, password: env.demo.adminPassword } });
  expect(login.status).toBe(200);
  token = login.body.token;
  const key = await env.api('/api/keys', { auth: token, json: { name: 'audited key', scopes: ['WORKFLOW_READ'], validityDays: 3 } });
  expect(key.status).toBe(201);
  const added = await env.api('/api/members', { auth: token, json: { ...member, role: 'member' } });
  expect(added.status).toBe(201);
}, 120_000);

afterAll(async () => env?.stop());

describe('the audit log page', () => {
  it("lists the admin's changes with channel and address, filters them, shows a bad filter at its field, and exports NDJSON", async () => {
    const context = await consoleContext(browser);
    const page = await context.newPage();
    await signIn(page, env.url, env.demo.adminEmail, env.demo.adminPassword);
    await page.goto(`${env.url}/console/audit`);
    await expect.poll(() => page.title()).toBe('Audit log · Flowgate');
    const rows = page.getByRole('row');
    const keyRow = rows.filter({ hasText: 'key.created' }).filter({ hasText: 'audited key' });
    await expect.poll(() => keyRow.count()).toBe(1);
    const keyCells = await keyRow.getByRole('cell').allTextContents();
    expect(keyCells).toContain('api');
    expect(keyCells).toContain('127.0.0.1');
    expect(keyCells.some((c) => c.includes(env.demo.adminEmail))).toBe(true);
    // This very sign-in, from the console.
    const signedIn = rows.filter({ hasText: 'session.signed_in' }).filter({ hasText: 'console' });
    expect(await signedIn.count()).toBeGreaterThanOrEqual(1);
    await expectAccessible(page);
    await shot(page, 'audit-log', 'light');
    await shot(page, 'audit-log', 'dark');
    await page.emulateMedia({ colorScheme: 'light' });

    // Filter by action: only key.created rows.
    await page.getByLabel('Action').fill('member.added');
    await Promise.all([
      page.waitForURL((u) => u.searchParams.get('action') === 'member.added'),
      page.getByRole('button', { name: 'Filter' }).click(),
    ]);
    const body = page.getByRole('row').filter({ hasText: 'member.' });
    await expect.poll(() => body.count()).toBe(1);
    expect(await body.first().textContent()).toContain(member.email);
    expect(await page.getByLabel('Action').inputValue()).toBe('member.added');

    // A bad time: shown at its field, the typed value kept, focus on it; no entries listed.
    await page.getByLabel('From (UTC)').fill('yesterday');
    await Promise.all([
      page.waitForURL((u) => u.searchParams.get('from') === 'yesterday'),
      page.getByRole('button', { name: 'Filter' }).click(),
    ]);
    const from = page.getByLabel('From (UTC)');
    expect(await from.inputValue()).toBe('yesterday');
    expect(await from.getAttribute('aria-invalid')).toBe('true');
    await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe('audit-from');
    expect(await page.locator('#audit-from-error').textContent()).toContain('ISO 8601');
    expect(await page.getByRole('table').count()).toBe(0);
    await expectAccessible(page);
    await shot(page, 'audit-log-bad-filter', 'light');

    // Export: the same filters' entries, one JSON a line.
    await page.getByLabel('From (UTC)').fill('');
    await Promise.all([
      page.waitForURL((u) => !u.searchParams.has('from') || u.searchParams.get('from') === ''),
      page.getByRole('button', { name: 'Filter' }).click(),
    ]);
    const href = await page.getByRole('link', { name: 'Export NDJSON' }).getAttribute('href');
    expect(href).toContain('action=member.added');
    const res = await page.request.get(`${env.url}${href}`);
    expect(res.status()).toBe(200);
    expect(res.headers()['content-type']).toBe('application/x-ndjson');
    const lines = (await res.text())
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.map((e) => [e.action, e.object.name])).toEqual([['member.added', member.email]]);
    expectNoCspViolations(context);
    await context.close();
  });

  it('shows a member their own entries only, with no actor filter', async () => {
    const context = await consoleContext(browser);
    const page = await context.newPage();
    await signIn(page, env.url, member.email, member.password);
    await page.goto(`${env.url}/console/audit`);
    await expect.poll(() => page.title()).toBe('Audit log · Flowgate');
    expect(await page.getByLabel('Actor').count()).toBe(0);
    const body = page.locator('tbody tr');
    await expect.poll(() => body.count()).toBeGreaterThanOrEqual(1);
    const texts = await body.allTextContents();
    expect(texts.every((t) => t.includes(member.email))).toBe(true);
    expect(texts.some((t) => t.includes('key.created'))).toBe(false);
    // Asking for the admin's entries by URL is refused.
    const me = await env.api('/api/auth/me', { auth: token });
    const res = await page.goto(`${env.url}/console/audit?actor=${me.body.user.id}`);
    expect(res?.status()).toBe(403);
    await expectAccessible(page);
    expectNoCspViolations(context);
    await context.close();
  });
});
