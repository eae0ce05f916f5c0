import { mkdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import axe from 'axe-core';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { expect } from 'vitest';
import { launchBrowser } from './browser.ts';
import { localStackOnSharedEmulators } from './local-stack.ts';

/**
 * The console in a real browser (Debian's Chromium headless shell, driven by playwright-core) on a local stack of
 * its own with the seeded demo. Tests act as a user does (roles, labels, visible text), check every
 * page with axe-core (WCAG 2.1 A and AA) and listen for CSP violations in every page they open.
 */

export type Demo = { apiKey: string; webhookId: string; workflowId: string; accountId: string; adminEmail: string; adminPassword: string };

/** Screenshots of a test run (look at them: `ls $TMPDIR/flowgate-console-shots`). */
export const SHOTS = join(tmpdir(), 'flowgate-console-shots');

/** A local stack with the demo seeded, and Chromium. Call `stop` in afterAll. */
export async function consoleStack(name: string, opts: { sweepSeconds?: number; demoRun?: boolean } = {}) {
  const { stack, dataDir } = await localStackOnSharedEmulators(name, { seed: true, ...opts });
  const demo = JSON.parse(readFileSync(join(dataDir, 'demo.json'), 'utf8')) as Demo;
  const browser = await launchBrowser();
  mkdirSync(SHOTS, { recursive: true });
  const stop = async () => {
    try {
      await browser.close();
    } finally {
      await stack.stop();
    }
  };
  /** The API with the demo's key (or `auth`), JSON in and out. */
  const api = async (path: string, init: { method?: string; json?: unknown; auth?: string } = {}) => {
    const res = await fetch(`${stack.url}${path}`, {
      method: init.method ?? (init.json !== undefined ? 'POST' : 'GET'),
      headers: {
        authorization: `Bearer ${init.auth ?? demo.apiKey}`,
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
  return { stack, url: stack.url, demo, browser, stop, api };
}

/** CSP violations seen in a context's pages (every test asserts none). */
const violations = new WeakMap<BrowserContext, string[]>();

/** A browser context that records every `securitypolicyviolation` of its pages. */
export async function consoleContext(browser: Browser, options: Parameters<Browser['newContext']>[0] = {}) {
  const context = await browser.newContext(options);
  const seen: string[] = [];
  violations.set(context, seen);
  await context.exposeBinding('__cspViolation', (_source, text: string) => {
    seen.push(text);
  });
  await context.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) => {
      // Where, and on what: the element (its tag, id and class) and the page, so an intermittent one can be traced.
      const el =
        e.target instanceof Element
          ? `<${e.target.localName}${e.target.id ? `#${e.target.id}` : ''} class="${e.target.getAttribute('class') ?? ''}">`
          : '';
      (window as unknown as { __cspViolation: (t: string) => void }).__cspViolation(
        `${e.violatedDirective} blocked ${e.blockedURI} at ${e.sourceFile}:${e.lineNumber} on ${el} of ${location.pathname} (${e.sample})`,
      );
    });
  });
  return context;
}

/** Assert that no page of `context` has violated the CSP so far. */
export function expectNoCspViolations(context: BrowserContext) {
  expect(violations.get(context) ?? []).toEqual([]);
}

/** Sign in on the sign-in page `page` is on (or opens it), as a user does. */
export async function signIn(page: Page, baseUrl: string, email: string, password: string) {
  if (!page.url().includes('/console/login')) await page.goto(`${baseUrl}/console/login`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await Promise.all([
    page.waitForURL((u) => !u.pathname.startsWith('/console/login')),
    page.getByRole('button', { name: 'Sign in' }).click(),
  ]);
}

/**
 * axe-core with the WCAG 2.1 A and AA rules on the page as it is: no violations. Injected as
 * @axe-core/playwright's legacy mode does it (the pages have no frames).
 */
export async function expectAccessible(page: Page) {
  await page.evaluate(axe.source);
  const result = await page.evaluate(
    (tags) => (window as unknown as { axe: typeof axe }).axe.run(document, { runOnly: { type: 'tag', values: tags } }),
    ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'],
  );
  const found = result.violations.map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`);
  expect(found, page.url()).toEqual([]);
}

/** A full-page screenshot under SHOTS, light or dark. */
export async function shot(page: Page, name: string, scheme: 'light' | 'dark' = 'light') {
  await page.emulateMedia({ colorScheme: scheme });
  const path = join(SHOTS, `${name}-${scheme}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}

/** The widths every console page is checked at: a laptop's and a phone's. */
export const DESKTOP = { width: 1280, height: 800 };
export const PHONE = { width: 390, height: 844 };

/** axe on the page as it is at 1280 and at 390 px (a screenshot of each under `name`), then back at 1280. */
export async function expectAccessibleAtBothWidths(page: Page, name?: string) {
  for (const [size, viewport] of [
    ['', DESKTOP],
    ['-phone', PHONE],
  ] as const) {
    await page.setViewportSize(viewport);
    await expectAccessible(page);
    if (name) await shot(page, `${name}${size}`);
  }
  await page.setViewportSize(DESKTOP);
}
