import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorkflow } from '../../shared/domain/workflows.ts';
import { WorkflowDefinition } from '../../shared/engine/definition.ts';
import {
  consoleContext,
  consoleStack,
  expectAccessible,
  expectAccessibleAtBothWidths,
  expectNoCspViolations,
  shot,
  signIn,
} from '../support/console-browser.ts';
import { givenAccount, uniqueEmail } from '../support/fixtures.ts';

/**
 * The workflow editor, versions and diff in a browser: a workflow created in the code editor
 * (CodeMirror: line numbers, styled under the CSP; the step types completed after `"type": "`) with an
 * error first (in plain words with "Line N" and its column as you type, the graph of the last valid
 * draft kept and labelled; "Line N" moves the caret; Tab leaves the editor; again after a submit),
 * fixed (the graph redrawn from the draft; a property's hover from the schema), saved; edited into
 * version 2; the versions page with each version's author, the diff between 1 and 2, "Restore this
 * version" on 1 making version 3; a member who may not edit (403), another account's ids (404); without
 * script, the text area edits and saves (a refused draft shows the saved version's graph). Every page:
 * axe (WCAG 2.1 A/AA), no CSP violation.
 */

let env: Awaited<ReturnType<typeof consoleStack>>;
let browser: Browser;
let admin: { context: BrowserContext; page: Page };
let token: string;
/** The workflow the editor creates. */
let workflowId: string;

const pretty = (v: unknown) => JSON.stringify(v, null, 2);
const WITH_ERROR = pretty({ steps: [{ id: 'greet', type: 'sett', values: { greeting: 'Hello' } }] });
const FIXED = pretty({
  steps: [
    { id: 'greet', type: 'set', values: { greeting: 'Hello' } },
    { id: 'wrap_up', type: 'set', values: { done: true } },
  ],
});
const EDITED = FIXED.replace('"Hello"', '"Hello, world"');

async function signedIn(as?: { email: string; password: string }) {
  const context = await consoleContext(browser);
  const page = await context.newPage();
  page.on('dialog', (d) => {
    throw new Error(`a dialog opened: ${d.message()}`);
  });
  await signIn(page, env.url, as?.email ?? env.demo.adminEmail, as?.password ?? env.demo.adminPassword);
  return { context, page };
}

/** The Definition: the code editor (CodeMirror's content, named by the field's label). */
const definition = (page: Page) => page.getByRole('textbox', { name: 'Definition', exact: true });

/** Replace the definition's text as a user pasting would (the editor copies it into the form's field: htmx checks it after 500 ms). */
async function typeDefinition(page: Page, text: string) {
  await definition(page).fill(text);
}

/** What the form posts: the hidden text area the editor keeps in step. */
const posted = (page: Page) => page.locator('#wf-definition').inputValue();

beforeAll(async () => {
  env = await consoleStack('console-editor');
  browser = env.browser;
  const login = await env.api('/api/auth/login', { json: { email: env.demo.adminEmail, password: env.demo.adminPassword } });
  expect(login.status).toBe(200);
  token = login.body.token;
  admin = await signedIn();
});
afterAll(async () => env?.stop());

describe('the editor', () => {
  it('creates a workflow in the code editor: completion, an error in plain words with "Line N", the last valid graph kept, fixed, saved', async () => {
    const { page, context } = admin;
    page.setDefaultTimeout(10_000);
    await page.goto(`${env.url}/console/workflows`);
    await page.getByRole('link', { name: 'New workflow' }).click();
    await page.waitForURL((u) => u.pathname === '/console/workflows/new');
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('New workflow');

    // The code editor replaces the text area: line numbers, styled (CodeMirror's constructed style sheets pass the CSP).
    const editor = page.locator('.cm-editor');
    await editor.waitFor();
    expect(await page.locator('#wf-definition').isHidden()).toBe(true);
    expect(await editor.locator('.cm-lineNumbers .cm-gutterElement', { hasText: /^5$/ }).count()).toBe(1);
    expect(await editor.evaluate((e) => getComputedStyle(e).display)).toBe('flex');
    expect(await editor.locator('.cm-gutters').evaluate((e) => getComputedStyle(e).borderRightStyle)).toBe('solid');

    // Completion from the schema: the step types after `"type": "`.
    await page.getByLabel('Name', { exact: true }).fill('Editor demo');
    await typeDefinition(page, '{\n  "steps": [\n    {\n      "id": "greet",\n      "type": "');
    await page.keyboard.type('se');
    const choices = page.getByRole('listbox');
    await choices.getByRole('option', { name: 'set' }).waitFor();
    expect(await choices.getByRole('option').allTextContents()).toContain('set');
    await shot(page, 'editor-completion');
    await page.keyboard.press('Enter');
    expect(await posted(page)).toMatch(/"type": "set"$/);

    // An unknown step type: the server's error in plain words, with its line and column; the graph of the last valid draft stays.
    await typeDefinition(page, WITH_ERROR);
    const errors = page.getByRole('region', { name: '1 error in the definition' });
    const line = WITH_ERROR.split('\n').findIndex((l) => l.includes('"sett"')) + 1;
    await expect
      .poll(() => errors.textContent())
      .toContain(`Line ${line}, column 7 — steps.0.type: unknown step type 'sett': did you mean 'set'?`);
    expect(await page.getByRole('heading', { name: 'Graph of the last valid draft' }).isVisible()).toBe(true);
    expect(await page.getByRole('img', { name: 'Graph of the draft' }).getByText('hello', { exact: true }).isVisible()).toBe(true);
    expect(await definition(page).getAttribute('aria-invalid')).toBe('true');
    // "Line N" moves the caret there.
    await errors.getByRole('link', { name: `Line ${line}` }).click();
    await expect.poll(() => page.locator('.cm-activeLine').textContent()).toContain('"type": "sett"');
    expect(await page.evaluate(() => document.activeElement?.classList.contains('cm-content'))).toBe(true);
    // Tab is not captured: it leaves the editor (and types nothing).
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.classList.contains('cm-content'))).toBe(false);
    expect(await posted(page)).toBe(WITH_ERROR);
    await expectAccessibleAtBothWidths(page, 'editor-error');

    // Save while invalid: the page again, the draft kept, the errors listed, focus on them; nothing saved.
    await page.getByRole('button', { name: 'Save' }).click();
    await page.waitForLoadState('domcontentloaded');
    expect(page.url()).toBe(`${env.url}/console/workflows/new`);
    expect(await page.getByLabel('Name', { exact: true }).inputValue()).toBe('Editor demo');
    expect(await posted(page)).toBe(WITH_ERROR);
    await page.locator('.cm-editor').waitFor();
    expect(await page.locator('.cm-content').textContent()).toContain('"type": "sett"');
    expect(await page.getByRole('region', { name: '1 error in the definition' }).textContent()).toContain(`Line ${line}, column 7`);
    await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe('draft-errors');
    expect(await definition(page).getAttribute('aria-invalid')).toBe('true');
    const listed = await env.api('/api/workflows?limit=100', { auth: token });
    expect(listed.body.items.map((w: { name: string }) => w.name)).not.toContain('Editor demo');

    // Fixed: no errors, and the graph of the draft, with the new step.
    await typeDefinition(page, FIXED);
    await page.getByRole('region', { name: 'No errors: the definition is valid' }).waitFor();
    expect(await definition(page).getAttribute('aria-invalid')).toBeNull();
    const graph = page.getByRole('img', { name: 'Graph of the draft' });
    await graph.waitFor();
    for (const id of ['greet', 'wrap_up']) expect(await graph.getByText(id, { exact: true }).isVisible(), id).toBe(true);
    // Hover: what the schema says of a property.
    const word = await page
      .locator('.cm-content .cm-line', { hasText: '"values"' })
      .first()
      .evaluate((line) => {
        const walker = document.createTreeWalker(line, NodeFilter.SHOW_TEXT);
        for (let n = walker.nextNode(); n; n = walker.nextNode()) {
          const i = (n.textContent ?? '').indexOf('values');
          if (i < 0) continue;
          const range = document.createRange();
          range.setStart(n, i);
          range.setEnd(n, i + 'values'.length);
          const r = range.getBoundingClientRect();
          return { x: r.x + r.width / 2, y: r.y + r.height / 2 };
        }
        throw new Error('no "values" on the line');
      });
    await page.mouse.move(word.x, word.y);
    expect(await page.locator('.cm-schema-hover').textContent()).toBe('values (required in a set step): an object');
    await expectAccessible(page);
    await shot(page, 'editor-graph');

    await page.getByRole('button', { name: 'Save' }).click();
    await page.waitForURL((u) => /^\/console\/workflows\/wf_\w+$/.test(u.pathname));
    workflowId = new URL(page.url()).pathname.split('/').pop() as string;
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Editor demo');
    expect(await page.getByRole('img', { name: 'Graph of Editor demo, version 1' }).isVisible()).toBe(true);
    expect(await page.locator('script[src*="/editor."]').count()).toBe(0);
    expectNoCspViolations(context);
  });

  it('edits it into version 2', async () => {
    const { page, context } = admin;
    await page.getByRole('link', { name: 'Edit', exact: true }).click();
    await page.waitForURL((u) => u.pathname === `/console/workflows/${workflowId}/edit`);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Edit Editor demo');
    expect(await posted(page)).toBe(`${FIXED}\n`);
    await expectAccessible(page);
    await typeDefinition(page, EDITED);
    await page.getByRole('region', { name: 'No errors: the definition is valid' }).waitFor();
    await page.getByRole('button', { name: 'Save' }).click();
    await page.waitForURL((u) => u.pathname === `/console/workflows/${workflowId}`);
    expect(await page.getByRole('img', { name: 'Graph of Editor demo, version 2' }).isVisible()).toBe(true);
    expectNoCspViolations(context);
  });

  it('text typed over a selection of several lines goes in as typed, without a CSP violation', async () => {
    // The browser's own edit of such a selection merges the lines' elements and, in Chromium, writes a style
    // attribute the CSP refuses; it did so in a few fills of 30 when CodeMirror had not yet read the selection.
    const context = await consoleContext(browser);
    const page = await context.newPage();
    await signIn(page, env.url, env.demo.adminEmail, env.demo.adminPassword);
    await page.goto(`${env.url}/console/workflows/new`);
    for (let i = 0; i < 40; i++) {
      const text = i % 2 ? FIXED : WITH_ERROR;
      await typeDefinition(page, text);
      expect(await posted(page)).toBe(text);
    }
    expectNoCspViolations(context);
    await context.close();
  });
});

describe('versions', () => {
  it('lists both with their author, shows the diff between 1 and 2, and restores 1 as version 3', async () => {
    const { page, context } = admin;
    await page.getByRole('link', { name: 'Versions', exact: true }).first().click();
    await page.waitForURL((u) => u.pathname === `/console/workflows/${workflowId}/versions`);
    const table = page.getByRole('table', { name: 'Versions, newest first' });
    const rows = table.getByRole('row');
    expect(await rows.count()).toBe(3);
    expect(await rows.nth(1).textContent()).toContain('Version 2');
    expect(await rows.nth(2).textContent()).toContain('Version 1');
    for (const r of [1, 2]) expect(await rows.nth(r).textContent()).toContain(env.demo.adminEmail);
    await expectAccessible(page);

    await rows.nth(1).getByRole('link', { name: 'Compare with previous' }).click();
    await page.waitForURL((u) => u.searchParams.get('from') === '1' && u.searchParams.get('to') === '2');
    const diff = page.getByRole('region', { name: 'Changes from version 1 to version 2' });
    expect(await diff.textContent()).toContain('1 line added (+), 1 line removed (−).');
    expect(await diff.locator('del').textContent()).toMatch(/^− +"greeting": "Hello",?\n$/);
    expect(await diff.locator('ins').textContent()).toMatch(/^\+ +"greeting": "Hello, world",?\n$/);
    await expectAccessible(page);
    await shot(page, 'versions-diff');

    await rows.nth(2).getByRole('link', { name: 'Restore this version' }).click();
    await page.waitForURL((u) => u.pathname === `/console/workflows/${workflowId}/versions/1/restore`);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe("Restore version 1 of 'Editor demo'?");
    await expectAccessible(page);
    await page.getByRole('button', { name: 'Restore this version' }).click();
    await page.waitForURL((u) => u.pathname === `/console/workflows/${workflowId}`);
    expect(await page.getByRole('img', { name: 'Graph of Editor demo, version 3' }).isVisible()).toBe(true);
    const [v1, v3] = await Promise.all(
      [1, 3].map(async (v) => (await env.api(`/api/workflows/${workflowId}/versions/${v}`, { auth: token })).body),
    );
    expect(v3.definition).toEqual(v1.definition);
    expect(v3.version).toBe(3);
    expectNoCspViolations(context);
  });
});

describe('who may edit', () => {
  it('a member who is not an editor: no Edit link, 403 on the editor and on a restore; Versions readable', async () => {
    const member = { email: uniqueEmail('member'), password: 'member password 123' };
    expect((await env.api('/api/members', { json: { ...member, role: 'member' }, auth: token })).status).toBe(201);
    const { context, page } = await signedIn(member);
    await page.goto(`${env.url}/console/workflows/${workflowId}`);
    expect(await page.getByRole('link', { name: 'Edit', exact: true }).count()).toBe(0);
    expect((await page.goto(`${env.url}/console/workflows/${workflowId}/edit`))?.status()).toBe(403);
    expect(await page.getByText('Only the owner, editors and admins may change this workflow.').isVisible()).toBe(true);
    await expectAccessible(page);
    expect((await page.goto(`${env.url}/console/workflows/${workflowId}/versions/1/restore`))?.status()).toBe(403);
    expect((await page.goto(`${env.url}/console/workflows/${workflowId}/versions`))?.status()).toBe(200);
    expect(await page.getByRole('link', { name: 'Restore this version' }).count()).toBe(0);
    expectNoCspViolations(context);
    await context.close();
  });

  it("another account's workflow: the editor, the versions and a restore are 404 pages", async () => {
    const other = await givenAccount();
    const foreign = await createWorkflow(
      { accountId: other.account.accountId, userId: other.admin.userId, role: 'admin' },
      {
        name: 'Not yours',
        definition: WorkflowDefinition.parse({ steps: [{ id: 's', type: 'set', values: {} }] }),
        recovery: false,
        editors: [],
      },
    );
    const { page, context } = admin;
    for (const path of ['edit', 'versions', 'versions/1/restore']) {
      const res = await page.goto(`${env.url}/console/workflows/${foreign.workflowId}/${path}`);
      expect(res?.status(), path).toBe(404);
      expect(await page.content()).not.toContain('Not yours');
    }
    await expectAccessible(page);
    expectNoCspViolations(context);
  });
});

describe('without script', () => {
  it('the text area is the editor: it edits and saves', async () => {
    const context = await consoleContext(browser, { javaScriptEnabled: false });
    const page = await context.newPage();
    await signIn(page, env.url, env.demo.adminEmail, env.demo.adminPassword);
    const before = (await env.api(`/api/workflows/${workflowId}`, { auth: token })).body.version as number;
    await page.goto(`${env.url}/console/workflows/${workflowId}/edit`);
    const area = page.getByLabel('Definition', { exact: true });
    expect(await area.evaluate((e) => e.tagName)).toBe('TEXTAREA');
    expect(await page.locator('.cm-editor').count()).toBe(0);
    await area.fill(WITH_ERROR);
    await page.getByRole('button', { name: 'Save' }).click();
    await page.waitForLoadState('domcontentloaded');
    // Refused: the error in words, "Line N" a plain link to the field, the saved version's graph labelled.
    const errors = page.getByRole('region', { name: '1 error in the definition' });
    expect(await errors.textContent()).toContain("unknown step type 'sett': did you mean 'set'?");
    expect(await errors.getByRole('link', { name: 'Line 5' }).getAttribute('href')).toBe('#wf-definition');
    expect(await page.getByRole('heading', { name: `Graph of the saved version (${before}): the draft has errors` }).isVisible()).toBe(
      true,
    );
    expect(
      await page
        .getByRole('img', { name: `Graph of version ${before}` })
        .getByText('greet', { exact: true })
        .isVisible(),
    ).toBe(true);
    await shot(page, 'editor-no-script');
    await page.getByLabel('Definition', { exact: true }).fill(EDITED.replace('"Hello, world"', '"Hi"'));
    await page.getByRole('button', { name: 'Save' }).click();
    await page.waitForURL((u) => u.pathname === `/console/workflows/${workflowId}`);
    const saved = await env.api(`/api/workflows/${workflowId}`, { auth: token });
    expect(saved.body.version).toBe(before + 1);
    expect(saved.body.definition.steps[0].values.greeting).toBe('Hi');
    expectNoCspViolations(context);
    await context.close();
  });
});
