import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consoleContext, consoleStack, expectAccessible, expectNoCspViolations, shot, signIn } from '../support/console-browser.ts';
import { givenAccount, PASSWORD, uniqueEmail } from '../support/fixtures.ts';

/**
 * The console's API keys, members and account pages in a browser: a key made with the keyboard alone,
 * its token shown once (a reload shows nothing and makes no second key), "Revoke" (the API refuses the
 * key at once), each validation error at its field, an admin's "All keys"; members read-only for a
 * member (their POST is 403), "Add member" with the initial password shown once, the last admin's
 * refusal, role, disable and enable; the account's plan and usage, the Slack user id and the password.
 * Another account's ids answer 404. Every page: axe (WCAG 2.1 A/AA), no CSP violation.
 */

let env: Awaited<ReturnType<typeof consoleStack>>;
let browser: Browser;
/** The demo admin's API session. */
let token: string;
/** A member of the demo account, and their own key (made through the API). */
const member = { email: uniqueEmail('member'), password: 'member password 123', id: '', keyId: '' };
/** Another account (one admin, one member). */
let other: Awaited<ReturnType<typeof givenAccount>>;

/** Signed-in contexts, one per person, shared by the tests (a sign-in costs a full scrypt). */
const contexts = new Map<string, BrowserContext>();

/** A new page in `as`'s signed-in context (the demo admin by default). */
async function signedIn(as?: { email: string; password: string }): Promise<{ context: BrowserContext; page: Page }> {
  const email = as?.email ?? env.demo.adminEmail;
  const context = contexts.get(email);
  if (!context) return signInAnew(as);
  const page = await context.newPage();
  page.on('dialog', (d) => {
    throw new Error(`a dialog opened: ${d.message()}`);
  });
  return { context, page: page };
}

async function signInAnew(as?: { email: string; password: string }, options = {}): Promise<{ context: BrowserContext; page: Page }> {
  const context = await consoleContext(browser, options);
  const page = await context.newPage();
  page.on('dialog', (d) => {
    throw new Error(`a dialog opened: ${d.message()}`);
  });
  await signIn(page, env.url, as?.email ?? env.demo.adminEmail, as?.password ?? env.demo.adminPassword);
  return { context, page };
}

/** What a focused element must be: its id, or its tag and trimmed text. */
type Target = { id?: string; tag?: string; text?: string };

/** Tab until the focused element is `target` (keyboard only). */
async function tabTo(page: Page, target: Target, what: string) {
  for (let i = 0; i < 60; i++) {
    await page.keyboard.press('Tab');
    const at = await page.evaluate(({ id, tag, text }) => {
      const el = document.activeElement;
      if (!el) return false;
      return (
        (id === undefined || el.id === id) &&
        (tag === undefined || el.tagName === tag) &&
        (text === undefined || el.textContent?.trim() === text)
      );
    }, target);
    if (at) return;
  }
  throw new Error(`Tab never reached ${what}`);
}

const focusedId = (page: Page) => page.evaluate(() => document.activeElement?.id ?? '');
const main = async (page: Page) => (await page.getByRole('main').textContent()) ?? '';
const myKeys = async (auth: string) => (await env.api('/api/keys', { auth })).body.items as { id: string; name: string; status: string }[];

beforeAll(async () => {
  env = await consoleStack('console-people', { demoRun: false });
  browser = env.browser;
  const login = await env.api('/api/auth/login', { json: { email: env.demo.adminEmail, password: env.demo.adminPassword } });
  expect(login.status, JSON.stringify(login.body)).toBe(200);
  token = login.body.token;
  const created = await env.api('/api/members', { auth: token, json: { email: member.email, password: member.password, role: 'member' } });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  member.id = created.body.id;
  const memberLogin = await env.api('/api/auth/login', { json: { email: member.email, password: member.password } });
  const key = await env.api('/api/keys', {
    auth: memberLogin.body.token,
    json: { name: "member's key", scopes: ['WORKFLOW_READ'], validityDays: 30 },
  });
  expect(key.status, JSON.stringify(key.body)).toBe(201);
  member.keyId = key.body.id;
  other = await givenAccount();
  const people = [undefined, member, { email: other.admin.email, password: PASSWORD }];
  const opened = await Promise.all(people.map((as) => signInAnew(as, { permissions: ['clipboard-read', 'clipboard-write'] })));
  people.forEach((as, i) => {
    contexts.set(as?.email ?? env.demo.adminEmail, opened[i]!.context);
  });
}, 120_000);
afterAll(async () => env?.stop());

describe('API keys', () => {
  it('creates a key with the keyboard alone; the token is shown once, copied, never in a URL; a reload makes no second key; Revoke ends it at once', async () => {
    const { context, page } = await signedIn();
    await page.goto(`${env.url}/console/keys`);
    await expectAccessible(page);
    await shot(page, 'keys-list');
    await tabTo(page, { tag: 'A', text: 'Create key' }, 'the Create key link');
    await Promise.all([page.waitForURL('**/console/keys/new'), page.keyboard.press('Enter')]);
    await expectAccessible(page);
    await tabTo(page, { id: 'key-name' }, 'Name');
    await page.keyboard.type('Deploy bot');
    await tabTo(page, { id: 'key-scope-WORKFLOW_READ' }, 'WORKFLOW_READ');
    await page.keyboard.press('Space');
    await page.keyboard.press('Tab');
    expect(await focusedId(page)).toBe('key-scope-WORKFLOW_EXECUTE');
    await page.keyboard.press('Space');
    await tabTo(page, { id: 'key-validity' }, 'Validity (days)');
    await page.keyboard.press('ControlOrMeta+A');
    await page.keyboard.type('30');
    await tabTo(page, { tag: 'BUTTON', text: 'Create key' }, 'the Create key button');
    const [answer] = await Promise.all([page.waitForResponse((r) => r.request().method() === 'POST'), page.keyboard.press('Enter')]);
    await page.waitForLoadState();
    expect(answer.status()).toBe(200);
    expect(answer.headers()['cache-control']).toBe('no-store');
    await page.waitForURL(`${env.url}/console/keys`);
    expect(await main(page)).toContain('This token is shown only once');
    const shown = await page.getByLabel('Token').inputValue();
    expect(shown).toMatch(/^dyk_/);
    expect(page.url()).not.toContain(shown);
    expect((await context.cookies()).some((c) => c.value.includes(shown))).toBe(false);
    await expectAccessible(page);
    await shot(page, 'key-created');
    // "Copy" (our script) puts the token on the clipboard; the keyboard presses it.
    await tabTo(page, { tag: 'BUTTON', text: 'Copy' }, 'Copy');
    await page.keyboard.press('Enter');
    await page.getByRole('button', { name: 'Copied' }).waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(shown);

    // The token works, with the chosen scopes.
    const me = await env.api('/api/v1/me', { auth: shown });
    expect(me.status).toBe(200);
    expect(me.body.scopes).toEqual(['WORKFLOW_READ', 'WORKFLOW_EXECUTE']);
    const keys = (await myKeys(token)).filter((k) => k.name === 'Deploy bot');
    expect(keys).toHaveLength(1);

    // A reload of the result re-sends its POST (the same form id and CSRF token): refused, nothing made, nothing shown.
    const resent = await page.request.post(`${env.url}/console/keys`, {
      form: Object.fromEntries(new URLSearchParams(answer.request().postData() ?? '')),
    });
    expect(resent.status()).toBe(409);
    const resentText = await resent.text();
    expect(resentText).toContain('This form was sent already');
    expect(resentText).not.toContain('dyk_');
    await page.reload();
    expect(await main(page)).not.toContain('This token is shown only once');
    expect(await page.getByLabel('Token').count()).toBe(0);
    expect((await myKeys(token)).filter((k) => k.name === 'Deploy bot')).toHaveLength(1);

    // Revoke: a confirmation naming the key, a button of the same name; the API refuses the token at once.
    await page.goto(`${env.url}/console/keys`);
    const row = page.getByRole('row').filter({ hasText: 'Deploy bot' });
    expect(await row.getByRole('cell').allTextContents()).toEqual(
      expect.arrayContaining(['WORKFLOW_READWORKFLOW_EXECUTE', expect.stringMatching(/^0 \(0 today\)$|^1 \(1 today\)$/), 'active']),
    );
    await row.getByRole('link', { name: 'Revoke' }).click();
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe("Revoke key 'Deploy bot'?");
    await expectAccessible(page);
    await shot(page, 'key-revoke');
    await Promise.all([page.waitForURL(`${env.url}/console/keys`), page.getByRole('button', { name: 'Revoke' }).click()]);
    expect(await page.getByRole('row').filter({ hasText: 'Deploy bot' }).getByRole('cell').allTextContents()).toContain('revoked');
    expect((await env.api('/api/v1/me', { auth: shown })).status).toBe(401);
    expectNoCspViolations(context);
    await page.close();
  }, 60_000);

  it('shows each validation error at its field, keeps the input, focuses the first error, and makes nothing', async () => {
    const { context, page } = await signedIn();
    const before = (await myKeys(token)).length;
    await page.goto(`${env.url}/console/keys/new`);
    await page.getByLabel('Validity (days)').fill('0');
    const [refused] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === 'POST'),
      page.getByRole('button', { name: 'Create key' }).click(),
    ]);
    await page.waitForLoadState();
    expect(refused.status()).toBe(400);
    expect(await page.getByRole('alert').textContent()).toContain('3 errors');
    expect(await page.getByLabel('Name').getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator('#key-name-error').textContent()).toMatch(/>=1 characters/);
    expect(await page.locator('#key-scopes-error').textContent()).toMatch(/>=1 items/);
    expect(await page.locator('#key-validity-error').textContent()).toMatch(/>=1/);
    expect(await page.getByLabel('Validity (days)').getAttribute('aria-describedby')).toBe('key-validity-error');
    expect(await focusedId(page)).toBe('key-name');
    await expectAccessible(page);
    await shot(page, 'key-form-errors');

    // 366 days, with a name and a scope: the one error at Validity, the rest kept as typed.
    await page.getByLabel('Name').fill('Too long');
    await page.getByRole('checkbox', { name: 'APPROVAL_RESPOND' }).check();
    await page.getByLabel('Validity (days)').fill('366');
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.waitForLoadState();
    expect(await page.locator('#key-validity-error').textContent()).toMatch(/<=365/);
    expect(await page.locator('#key-name-error').count()).toBe(0);
    expect(await page.getByLabel('Name').inputValue()).toBe('Too long');
    expect(await page.getByRole('checkbox', { name: 'APPROVAL_RESPOND' }).isChecked()).toBe(true);
    expect(await page.getByRole('checkbox', { name: 'WORKFLOW_READ' }).isChecked()).toBe(false);
    expect(await focusedId(page)).toBe('key-validity');
    await expectAccessible(page);
    // The corrected form goes through with the same form id (a refusal gave nothing away).
    await page.getByLabel('Validity (days)').fill('365');
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.waitForLoadState();
    expect(await main(page)).toContain('This token is shown only once');
    expect((await myKeys(token)).length).toBe(before + 1);
    expectNoCspViolations(context);
    await page.close();
  }, 60_000);

  it("an admin's \"All keys\" shows every member's keys with their owner; a member has only theirs; another account's key is 404", async () => {
    const { context, page } = await signedIn();
    await page.goto(`${env.url}/console/keys`);
    expect(await main(page)).not.toContain("member's key");
    await page.getByRole('link', { name: 'All keys' }).click();
    await page.waitForURL('**/console/keys?all=1');
    const row = page.getByRole('row').filter({ hasText: "member's key" });
    expect(await row.getByRole('cell').first().textContent()).toBe(member.email);
    await expectAccessible(page);
    await shot(page, 'keys-all');
    // An admin may revoke a member's key: its confirmation opens.
    expect((await page.goto(`${env.url}/console/keys/${member.keyId}/revoke`))?.status()).toBe(200);
    // Another account's key: the same 404 as an unknown one, for the page and for its POST.
    const theirs = await page.goto(`${env.url}/console/keys/${other.adminKey.id}/revoke`);
    expect(theirs?.status()).toBe(404);
    expect(await main(page)).not.toContain('admin key');
    await expectAccessible(page);
    const csrf = await page.locator('input[name="csrf"]').first().inputValue();
    const post = await page.request.post(`${env.url}/console/keys/${other.adminKey.id}/revoke`, { form: { csrf }, maxRedirects: 0 });
    expect(post.status()).toBe(404);
    expect((await env.api('/api/v1/me', { auth: other.adminKey.token })).status).toBe(200);
    expectNoCspViolations(context);
    await page.close();

    const m = await signedIn(member);
    await m.page.goto(`${env.url}/console/keys`);
    expect(await m.page.getByRole('link', { name: 'All keys' }).count()).toBe(0);
    expect(await main(m.page)).toContain("member's key");
    expect((await m.page.goto(`${env.url}/console/keys?all=1`))?.status()).toBe(403);
    expectNoCspViolations(m.context);
    await m.page.close();
  }, 60_000);
});

describe('members', () => {
  it('a member reads the list with no forms; their POST to add a member is 403', async () => {
    const { context, page } = await signedIn(member);
    await page.goto(`${env.url}/console/members`);
    expect(await page.getByRole('row').filter({ hasText: env.demo.adminEmail }).count()).toBe(1);
    expect(await page.getByRole('link', { name: 'Add member' }).count()).toBe(0);
    expect(await page.getByRole('main').locator('form, a[href*="/console/members/"]').count()).toBe(0);
    await expectAccessible(page);
    await shot(page, 'members-member');
    const csrf = await page.locator('input[name="csrf"]').first().inputValue();
    const before = (await env.api('/api/members', { auth: token })).body.items.length;
    const post = await page.request.post(`${env.url}/console/members`, {
      form: { csrf, email: uniqueEmail('sneaky'), role: 'admin', formId: crypto.randomUUID() },
      maxRedirects: 0,
    });
    expect(post.status()).toBe(403);
    expect((await env.api('/api/members', { auth: token })).body.items.length).toBe(before);
    expect((await page.goto(`${env.url}/console/members/new`))?.status()).toBe(403);
    expectNoCspViolations(context);
    await page.close();
  });

  it('an admin adds a member (the initial password shown once, and it signs in); an email in use is refused at Email', async () => {
    const { context, page } = await signedIn();
    await page.goto(`${env.url}/console/members`);
    await expectAccessible(page);
    await shot(page, 'members-admin');
    await page.getByRole('link', { name: 'Add member' }).click();
    await expectAccessible(page);
    // Bad email first: at its field, focused.
    await page.getByLabel('Email').fill('not an email');
    await page.getByRole('button', { name: 'Add member' }).click();
    await page.waitForLoadState();
    expect(await page.locator('#member-email-error').textContent()).toMatch(/email/i);
    expect(await focusedId(page)).toBe('member-email');
    // In use: at Email too.
    await page.getByLabel('Email').fill(member.email);
    await page.getByRole('button', { name: 'Add member' }).click();
    await page.waitForLoadState();
    expect(await page.locator('#member-email-error').textContent()).toBe('A member of this account has this email.');
    await expectAccessible(page);
    const added = uniqueEmail('added');
    await page.getByLabel('Email').fill(added);
    await page.getByLabel('Role').selectOption('member');
    const [answer] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === 'POST'),
      page.getByRole('button', { name: 'Add member' }).click(),
    ]);
    await page.waitForLoadState();
    expect(answer.status()).toBe(200);
    expect(answer.headers()['cache-control']).toBe('no-store');
    expect(await main(page)).toContain('This password is shown only once');
    const password = await page.getByLabel('Initial password').inputValue();
    expect(password.length).toBeGreaterThanOrEqual(16);
    await expectAccessible(page);
    await shot(page, 'member-added');
    const resent = await page.request.post(`${env.url}/console/members`, {
      form: Object.fromEntries(new URLSearchParams(answer.request().postData() ?? '')),
    });
    expect(resent.status()).toBe(409);
    expect(await resent.text()).not.toContain(password);
    expectNoCspViolations(context);
    await page.close();
    const fresh = await signInAnew({ email: added, password });
    expect(fresh.page.url()).toContain('/console');
    await fresh.context.close();
  }, 60_000);

  it('the last admin cannot be removed, demoted or disabled (the page says why); role, disable and enable with restored keys', async () => {
    const { context, page } = await signedIn({ email: other.admin.email, password: PASSWORD });
    for (const [action, button] of [
      ['remove', 'Remove'],
      ['disable', 'Disable'],
    ] as const) {
      await page.goto(`${env.url}/console/members/${other.admin.userId}/${action}`);
      const [answer] = await Promise.all([
        page.waitForResponse((r) => r.request().method() === 'POST'),
        page.getByRole('button', { name: button }).click(),
      ]);
      await page.waitForLoadState();
      expect(answer.status()).toBe(409);
      expect(await page.getByRole('alert').textContent()).toContain('The account must keep at least one enabled admin');
    }
    await page.goto(`${env.url}/console/members/${other.admin.userId}/role`);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe(`Change the role of '${other.admin.email}'?`);
    await page.getByLabel('Role').selectOption('member');
    await page.getByRole('button', { name: 'Change role' }).click();
    await page.waitForLoadState();
    expect(await page.getByRole('alert').textContent()).toContain('The account must keep at least one enabled admin');
    expect(await page.getByRole('button', { name: 'Change role' }).getAttribute('aria-describedby')).toBe('member-action-refusal');
    await expectAccessible(page);
    await shot(page, 'member-last-admin');

    // Disable the member: their key is refused; enable with "Restore their API keys": it works again.
    const memberRow = () => page.getByRole('row').filter({ hasText: other.member.email });
    await page.goto(`${env.url}/console/members`);
    await memberRow().getByRole('link', { name: 'Disable' }).click();
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe(`Disable member '${other.member.email}'?`);
    await expectAccessible(page);
    await Promise.all([page.waitForURL(`${env.url}/console/members`), page.getByRole('button', { name: 'Disable' }).click()]);
    expect(await memberRow().getByRole('cell').allTextContents()).toContain('disabled');
    expect((await env.api('/api/v1/me', { auth: other.memberKey.token })).status).toBe(401);
    await memberRow().getByRole('link', { name: 'Enable' }).click();
    await page.getByLabel('Restore their API keys').check();
    await Promise.all([page.waitForURL(`${env.url}/console/members`), page.getByRole('button', { name: 'Enable' }).click()]);
    expect(await memberRow().getByRole('cell').allTextContents()).toContain('enabled');
    expect((await env.api('/api/v1/me', { auth: other.memberKey.token })).status).toBe(200);
    // Promote them: now the first admin may step down.
    await memberRow().getByRole('link', { name: 'Change role' }).click();
    await page.getByLabel('Role').selectOption('admin');
    await Promise.all([page.waitForURL(`${env.url}/console/members`), page.getByRole('button', { name: 'Change role' }).click()]);
    expect(await memberRow().getByRole('cell').allTextContents()).toContain('admin');
    expectNoCspViolations(context);
    await page.close();
  }, 60_000);

  it("another account's member is the same 404 as an unknown one, for the page and its POST", async () => {
    const { context, page } = await signedIn();
    const unknown = await page.goto(`${env.url}/console/members/usr_00000000000000000000000000/remove`);
    const unknownText = (await main(page)).replace(/Request \S+/, '');
    const theirs = await page.goto(`${env.url}/console/members/${other.member.userId}/remove`);
    expect(unknown?.status()).toBe(404);
    expect(theirs?.status()).toBe(404);
    expect((await main(page)).replace(/Request \S+/, '')).toBe(unknownText);
    await expectAccessible(page);
    const csrf = await page.locator('input[name="csrf"]').first().inputValue();
    const post = await page.request.post(`${env.url}/console/members/${other.member.userId}/remove`, { form: { csrf }, maxRedirects: 0 });
    expect(post.status()).toBe(404);
    expect((await env.api('/api/v1/me', { auth: other.memberKey.token })).status).toBe(200);
    expectNoCspViolations(context);
    await page.close();
  });
});

describe('account', () => {
  it("shows the plan's limits and usage; saves the Slack user id; changes the password (a wrong current one at its field)", async () => {
    const { context, page } = await signedIn(member);
    await page.goto(`${env.url}/console/account`);
    const text = await main(page);
    expect(text).toContain('team plan');
    expect(text).toMatch(/\d+ of 50 schedules/);
    expect(text).toMatch(/\d+ of 10 webhooks/);
    expect(text).toMatch(/of 3,000 requests this minute/);
    await expectAccessible(page);
    await shot(page, 'account');

    // Slack user id: refused at its field, then saved.
    await page.getByLabel('Slack user id').fill('nope');
    await page.getByRole('button', { name: 'Save profile' }).click();
    await page.waitForLoadState();
    expect(await page.locator('#profile-slack-error').textContent()).toBe('must be a Slack user id (U…)');
    expect(await page.getByLabel('Slack user id').inputValue()).toBe('nope');
    expect(await focusedId(page)).toBe('profile-slack');
    await expectAccessible(page);
    await page.getByLabel('Slack user id').fill('U0PEOPLE1');
    await Promise.all([page.waitForURL('**/console/account?saved=profile'), page.getByRole('button', { name: 'Save profile' }).click()]);
    expect(await page.getByRole('status').textContent()).toBe('Your profile was saved.');
    expect(await page.getByLabel('Slack user id').inputValue()).toBe('U0PEOPLE1');
    const listed = (await env.api('/api/members', { auth: token })).body.items.find((u: { id: string }) => u.id === member.id);
    expect(listed.slackUserId).toBe('U0PEOPLE1');

    // Password: a wrong current one, then a mismatched confirmation, each at its field; then changed.
    await page.getByLabel('Current password').fill('not my password');
    await page.getByLabel('New password', { exact: true }).fill('a brand new password');
    await page.getByLabel('Confirm new password').fill('a brand new password');
    await page.getByRole('button', { name: 'Change password' }).click();
    await page.waitForLoadState();
    expect(await page.locator('#password-current-error').textContent()).toBe('is not your current password');
    expect(await focusedId(page)).toBe('password-current');
    await expectAccessible(page);
    await shot(page, 'account-password-error');
    await page.getByLabel('Current password').fill(member.password);
    await page.getByLabel('New password', { exact: true }).fill('a brand new password');
    await page.getByLabel('Confirm new password').fill('a different one!!');
    await page.getByRole('button', { name: 'Change password' }).click();
    await page.waitForLoadState();
    expect(await page.locator('#password-confirm-error').textContent()).toBe('does not match the new password');
    expect((await env.api('/api/auth/login', { json: { email: member.email, password: member.password } })).status).toBe(200);
    await page.getByLabel('Current password').fill(member.password);
    await page.getByLabel('New password', { exact: true }).fill('a brand new password');
    await page.getByLabel('Confirm new password').fill('a brand new password');
    await Promise.all([
      page.waitForURL('**/console/account?saved=password'),
      page.getByRole('button', { name: 'Change password' }).click(),
    ]);
    expect(await page.getByRole('status').textContent()).toBe('Your password was changed.');
    expect((await env.api('/api/auth/login', { json: { email: member.email, password: member.password } })).status).toBe(401);
    expect((await env.api('/api/auth/login', { json: { email: member.email, password: 'a brand new password' } })).status).toBe(200);
    member.password = 'a brand new password';
    expectNoCspViolations(context);
    await page.close();
  }, 60_000);
});
