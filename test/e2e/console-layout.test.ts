import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consoleRoutes } from '../../functions/console-routes.ts';
import { eventually } from '../support/engine.ts';
import { PASSWORD, uniqueEmail } from '../support/fixtures.ts';
import { consoleContext, consoleStack, expectAccessible, expectNoCspViolations, shot, signIn } from '../support/console-browser.ts';

/**
 * Every console page of the route table, with concrete ids of a seeded account, in Chromium at a phone's
 * width (390 px) and a laptop's (1280 px): nothing wider than the screen at 390 (only a table or a
 * drawing scrolls, inside its own box), no table cut off at 1280, drawings' text at 11 CSS px or more,
 * "Skip to content" as the first Tab, a visible focus ring (3:1 against the page) on every control Tab
 * reaches, and axe on each page at both widths.
 */

let env: Awaited<ReturnType<typeof consoleStack>>;
let browser: Browser;
let context: BrowserContext;
let page: Page;
/** The route table's GET console paths, each with the concrete paths that visit it. */
let pages: Map<string, string[]>;

/** GET console routes that answer no page of their own (a file, a download, a fragment of another page's form). */
const NOT_PAGES: Record<string, string> = {
  '/console/assets/{name}': 'the pages’ CSS and scripts',
  '/console/audit/export': 'an NDJSON download',
  '/console/runs/{executionId}/artifacts/{artifactId}': "an artifact's file",
  '/console/schedules/preview': 'an HTML fragment inside the schedule form (visited as part of /console/schedules/new)',
};

beforeAll(async () => {
  env = await consoleStack('console-layout');
  browser = env.browser;
  const login = await env.api('/api/auth/login', { json: { email: env.demo.adminEmail, password: env.demo.adminPassword }, auth: '' });
  expect(login.status, JSON.stringify(login.body)).toBe(200);
  const auth = login.body.token as string;
  const api = async (path: string, json?: unknown) => {
    const r = await env.api(path, { auth, json });
    expect(r.status, `${path} ${JSON.stringify(r.body)}`).toBeLessThan(300);
    return r.body;
  };
  const wf = env.demo.workflowId;
  // The seeded demo run waits at its approval; the rest is made here, named as long as people name things.
  const approvals = await eventually(
    () => env.api('/api/v1/approvals?limit=100'),
    (r) => Array.isArray(r.body.items) && r.body.items.length > 0,
    60_000,
  );
  const { approvalId, executionId } = approvals.body.items[0] as { approvalId: string; executionId: string };
  const schedule = await api(`/api/workflows/${wf}/schedules`, {
    name: 'Nightly production deploy of the customer-facing billing service',
    expression: 'cron(0 3 * * ? *)',
    timezone: 'Europe/Amsterdam',
  });
  await api('/api/secrets', { name: SECRET, value: 'x-layout', allowedHosts: ['api.example.com'] });
  const channel = await api('/api/channels', { type: 'email', name: 'release-managers-distribution-list', from: 'flowgate@example.com' });
  const key = await api('/api/keys', {
    name: 'deploy pipeline of the billing service',
    scopes: ['WORKFLOW_READ', 'WORKFLOW_EXECUTE'],
    validityDays: 30,
  });
  const member = await api('/api/members', { email: uniqueEmail('a-rather-long-member-address'), password: PASSWORD, role: 'member' });
  // A request the demo webhook refused (unsigned), for its inbound log's pages.
  await fetch(`${env.url}/api/webhooks/${env.demo.webhookId}/trigger`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'user-agent': 'a-rather-long-sender-agent/1.0 (layout test)' },
    body: JSON.stringify({ note: 'x'.repeat(300) }),
  });
  const inbound = await eventually(
    () => env.api(`/api/webhooks/${env.demo.webhookId}/requests`, { auth }),
    (r) => Array.isArray(r.body.items) && r.body.items.length > 0,
    30_000,
  );
  pages = new Map(
    Object.entries(
      concretePaths({
        wf,
        webhook: env.demo.webhookId,
        executionId,
        approvalId,
        schedule: schedule.id,
        channel: channel.id,
        key: key.id,
        member: member.id,
        request: inbound.body.items[0].requestId,
      }),
    ),
  );
  context = await consoleContext(browser);
  page = await context.newPage();
  await signIn(page, env.url, env.demo.adminEmail, env.demo.adminPassword);
}, 240_000);
afterAll(async () => env?.stop());

type Ids = Record<'wf' | 'webhook' | 'executionId' | 'approvalId' | 'schedule' | 'channel' | 'key' | 'member' | 'request', string>;
const SECRET = 'BILLING_SERVICE_DEPLOYMENT_TOKEN_FOR_PRODUCTION';

/** The concrete paths of each GET page of the route table (every value of an enumerated part). */
function concretePaths({ wf, webhook, executionId, approvalId, schedule, channel, key, member, request }: Ids): Record<string, string[]> {
  return {
    '/console/login': ['/console/login'],
    '/console': ['/console'],
    '/console/workflows': ['/console/workflows'],
    '/console/workflows/{workflowId}': [`/console/workflows/${wf}`],
    '/console/runs/{executionId}': [`/console/runs/${executionId}`],
    '/console/runs/{executionId}/values/{part}': ['inputs', 'variables'].map((p) => `/console/runs/${executionId}/values/${p}`),
    '/console/runs/{executionId}/steps/{stepId}/{part}': ['input', 'output'].map((p) => `/console/runs/${executionId}/steps/prepare/${p}`),
    '/console/runs/{executionId}/{action}': [`/console/runs/${executionId}/cancel`],
    '/console/runs': ['/console/runs'],
    '/console/approvals': ['/console/approvals', '/console/approvals?sort=deadline&all=1'],
    '/console/approvals/{approvalId}': [`/console/approvals/${approvalId}`],
    '/console/workflows/new': ['/console/workflows/new'],
    '/console/workflows/{workflowId}/edit': [`/console/workflows/${wf}/edit`],
    '/console/workflows/{workflowId}/run': [`/console/workflows/${wf}/run`],
    '/console/workflows/{workflowId}/versions': [`/console/workflows/${wf}/versions`],
    '/console/workflows/{workflowId}/versions/{version}/restore': [`/console/workflows/${wf}/versions/1/restore`],
    '/console/keys': ['/console/keys'],
    '/console/keys/new': ['/console/keys/new'],
    '/console/keys/{id}/revoke': [`/console/keys/${key}/revoke`],
    '/console/members': ['/console/members'],
    '/console/members/new': ['/console/members/new'],
    '/console/members/{id}/{action}': ['role', 'disable', 'remove'].map((a) => `/console/members/${member}/${a}`),
    '/console/account': ['/console/account'],
    '/console/webhooks': ['/console/webhooks'],
    '/console/webhooks/new': ['/console/webhooks/new'],
    '/console/webhooks/{id}': [`/console/webhooks/${webhook}`],
    '/console/webhooks/{id}/requests': [`/console/webhooks/${webhook}/requests`],
    '/console/webhooks/{id}/requests/{requestId}': [`/console/webhooks/${webhook}/requests/${request}`],
    '/console/webhooks/{id}/{page}': ['edit', 'delete'].map((p) => `/console/webhooks/${webhook}/${p}`),
    '/console/schedules': ['/console/schedules'],
    '/console/schedules/new': ['/console/schedules/new'],
    '/console/schedules/{scheduleId}/delete': [`/console/schedules/${schedule}/delete`],
    '/console/secrets': ['/console/secrets'],
    '/console/secrets/new': ['/console/secrets/new'],
    '/console/secrets/{name}/{action}': ['edit', 'delete'].map((a) => `/console/secrets/${SECRET}/${a}`),
    '/console/channels': ['/console/channels'],
    '/console/channels/new': ['/console/channels/new'],
    '/console/channels/{channelId}': [`/console/channels/${channel}`],
    '/console/channels/{channelId}/delete': [`/console/channels/${channel}/delete`],
    '/console/audit': ['/console/audit'],
  };
}
/** The templates, known before the stack is (one test per page and width). */
const TEMPLATES = Object.keys(concretePaths({} as Ids)).filter((t) => t !== '/console/login');

/** Open `path` at `width` (a fresh load: the layout of that width from the start); its status. */
async function open(path: string, width: number) {
  await page.setViewportSize({ width, height: width < 500 ? 844 : 800 });
  const res = await page.goto(`${env.url}${path}`);
  return res?.status();
}

/** Each drawing's text in CSS pixels as shown: its font size times its SVG's scale. The smallest, or Infinity. */
const smallestSvgText = () =>
  page.evaluate(() => {
    let min = Number.POSITIVE_INFINITY;
    for (const t of Array.from(document.querySelectorAll('svg text'))) {
      const ctm = (t as SVGTextElement).getScreenCTM();
      if (!ctm || !(t as SVGTextElement).textContent?.trim()) continue;
      min = Math.min(min, Number.parseFloat(getComputedStyle(t).fontSize) * Math.hypot(ctm.a, ctm.b));
    }
    return min;
  });

/** The document's width (at most the screen's), and the elements that reach past the screen's right edge outside any scrolling box. */
const wider = () =>
  page.evaluate(() => {
    const scrolls = (e: Element) => ['auto', 'scroll', 'hidden', 'clip'].includes(getComputedStyle(e).overflowX);
    const beyond = Array.from(document.querySelectorAll('body *'))
      .filter((e) => e.getBoundingClientRect().right > innerWidth + 0.5)
      .filter((e) => {
        for (let p = e.parentElement; p && p !== document.body; p = p.parentElement) if (scrolls(p)) return false;
        return true;
      })
      .slice(0, 5)
      .map((e) => `${e.tagName.toLowerCase()}.${e.className} ${Math.round(e.getBoundingClientRect().right)}px`);
    return { width: Math.max(document.documentElement.scrollWidth, innerWidth), beyond };
  });

/** Tables whose content is wider than their box (a column hidden behind a scroll). */
const cutTables = () =>
  page.evaluate(() =>
    Array.from(document.querySelectorAll('table'))
      .filter((t) => {
        const wrap = t.closest('.table-wrap') ?? t;
        return wrap.scrollWidth > wrap.clientWidth + 1 || t.getBoundingClientRect().width > wrap.getBoundingClientRect().width + 1;
      })
      .map((t) => t.querySelector('caption')?.textContent ?? t.querySelector('th')?.textContent ?? 'a table'),
  );

/**
 * The focused element's outline as drawn: its style, width and contrast against the background behind it
 * (the nearest ancestor with a background; the page's otherwise).
 */
const focusRing = () =>
  page.evaluate(() => {
    const el = document.activeElement as HTMLElement | null;
    if (!el || el === document.body) return undefined;
    const rgb = (c: string) => (c.match(/[\d.]+/g) ?? []).map(Number);
    const lum = (c: string) => {
      const [r, g, b] = rgb(c).map((v) => {
        const s = v / 255;
        return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
      });
      return 0.2126 * (r ?? 0) + 0.7152 * (g ?? 0) + 0.0722 * (b ?? 0);
    };
    let bg = 'rgb(255, 255, 255)';
    for (let p = el.parentElement; p; p = p.parentElement) {
      const c = getComputedStyle(p).backgroundColor;
      if ((rgb(c)[3] ?? 1) > 0.5) {
        bg = c;
        break;
      }
    }
    const s = getComputedStyle(el);
    const [l1, l2] = [lum(s.outlineColor), lum(bg)].sort((a, b) => b - a) as [number, number];
    const kind = `${el.tagName.toLowerCase()}${el.tagName === 'INPUT' ? `[type=${el.getAttribute('type') ?? 'text'}]` : ''}${el.classList.contains('secondary') ? '.secondary' : ''}`;
    return {
      kind,
      what: `${kind} "${(el.textContent ?? el.getAttribute('name') ?? '').trim().slice(0, 40)}"`,
      style: s.outlineStyle,
      width: Number.parseFloat(s.outlineWidth),
      contrast: (l1 + 0.05) / (l2 + 0.05),
      skip: el.classList.contains('skip-link'),
    };
  });

describe('every console page at 390 and 1280 px', () => {
  it("visits every GET page of the route table (a new page joins this test's list)", () => {
    const gets = consoleRoutes.filter((r) => r.method === 'GET').map((r) => r.path as string);
    expect(gets.filter((p) => !pages.has(p) && !(p in NOT_PAGES))).toEqual([]);
    expect(TEMPLATES.length).toBeGreaterThan(30);
    expect([...pages.keys()].filter((p) => !gets.includes(p))).toEqual([]);
  });

  it.each(TEMPLATES)(
    'at 390 px, %s: no wider than the screen, drawings keep 11 px text, the first Tab reaches "Skip to content"',
    async (template) => {
      for (const path of pages.get(template) ?? []) {
        expect(await open(path, 390), path).toBe(200);
        if (path === pages.get(template)?.[0]) await shot(page, `layout-390${path.replaceAll('/', '_')}`);
        expect(await wider(), path).toEqual({ width: 390, beyond: [] });
        expect(await smallestSvgText(), path).toBeGreaterThanOrEqual(10.95);
        await page.keyboard.press('Tab');
        const first = await page.evaluate(() => {
          const a = document.activeElement as HTMLElement;
          const r = a.getBoundingClientRect();
          return { text: a.textContent, href: a.getAttribute('href'), visible: r.top >= 0 && r.left >= 0 && r.right <= innerWidth };
        });
        expect(first, path).toEqual({ text: 'Skip to content', href: '#main', visible: true });
        await expectAccessible(page);
      }
      expectNoCspViolations(context);
    },
    120_000,
  );

  const kinds = new Set<string>();
  it.each(TEMPLATES)(
    'at 1280 px, %s: no table hides a column behind a scroll; Tab shows a 3:1 focus ring on every control',
    async (template) => {
      for (const path of pages.get(template) ?? []) {
        expect(await open(path, 1280), path).toBe(200);
        if (path === pages.get(template)?.[0]) await shot(page, `layout-1280${path.replaceAll('/', '_')}`);
        expect((await cutTables()).join('\n'), path).toBe('');
        expect(await smallestSvgText(), path).toBeGreaterThanOrEqual(10.95);
        await expectAccessible(page);
        const faint: string[] = [];
        for (let i = 0; i < 80; i++) {
          await page.keyboard.press('Tab');
          const ring = await focusRing();
          if (!ring || (ring.skip && i > 0)) break;
          kinds.add(ring.kind);
          if (ring.style === 'none' || ring.width < 2 || ring.contrast < 3)
            faint.push(`${ring.what} (${ring.style} ${ring.width}px, ${ring.contrast.toFixed(2)}:1)`);
        }
        expect(faint.join('\n'), path).toBe('');
      }
      expectNoCspViolations(context);
    },
    120_000,
  );

  it('the focus rings checked include every kind of control the console has', () => {
    for (const kind of [
      'a',
      'button',
      'button.secondary',
      'input[type=datetime-local]',
      'input[type=checkbox]',
      'select',
      'textarea',
      'summary',
    ])
      expect([...kinds], kind).toContain(kind);
  });

  it('"Skip to content" moves focus to the page\'s content; the sign-in page has it too', async () => {
    await open('/console/runs', 390);
    await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    expect(await page.evaluate(() => document.activeElement?.tagName)).toBe('MAIN');
    await page.keyboard.press('Tab');
    // The next Tab is inside the content (the runs filters), past the navigation.
    expect(await page.evaluate(() => !!document.activeElement?.closest('main'))).toBe(true);

    const anonymous = await consoleContext(browser);
    const signInPage = await anonymous.newPage();
    for (const width of [390, 1280]) {
      await signInPage.setViewportSize({ width, height: 800 });
      await signInPage.goto(`${env.url}/console/login`);
      expect(await signInPage.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);
      await signInPage.keyboard.press('Tab');
      expect(await signInPage.evaluate(() => document.activeElement?.textContent)).toBe('Skip to content');
      await expectAccessible(signInPage);
    }
    expectNoCspViolations(anonymous);
    await anonymous.close();
  });
});
