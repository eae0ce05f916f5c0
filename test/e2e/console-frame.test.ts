import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consoleContext, consoleStack, expectAccessible, expectNoCspViolations, shot, signIn } from '../support/console-browser.ts';

/** The console's frame in a browser: sign-in, the session cookie, navigation, sign-out, the CSP, axe. */

let env: Awaited<ReturnType<typeof consoleStack>>;
let browser: Browser;
beforeAll(async () => {
  env = await consoleStack('console-frame');
  browser = env.browser;
});
afterAll(async () => env?.stop());

describe('the console frame', () => {
  it('GET / goes to the console; without a session the console asks to sign in and comes back to the page asked for', async () => {
    const context = await consoleContext(browser);
    const page = await context.newPage();
    const opened = await page.goto(`${env.url}/?from=bookmark`);
    expect(new URL(page.url()).pathname).toBe('/console/login');
    expect(new URL(page.url()).searchParams.get('next')).toBe('/console');
    expect(opened?.headers()['content-security-policy']).toContain("script-src 'self'");
    await expectAccessible(page);
    await shot(page, 'sign-in');

    // A wrong password stays on the page and says only this.
    await page.getByLabel('Email').fill(env.demo.adminEmail);
    await page.getByLabel('Password').fill('not the password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toBe('Email or password is wrong');
    expect(new URL(page.url()).pathname).toBe('/console/login');
    // An unknown email says the same.
    await page.getByLabel('Email').fill('nobody@demo.local');
    await page.getByLabel('Password').fill('not the password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toBe('Email or password is wrong');

    await signIn(page, env.url, env.demo.adminEmail, env.demo.adminPassword);
    expect(new URL(page.url()).pathname).toBe('/console');
    const nav = page.getByRole('navigation', { name: 'Console' });
    for (const name of ['Runs', 'Workflows']) expect(await nav.getByRole('link', { name, exact: true }).count()).toBe(1);
    // The overview reads what waits for me: once the demo run waits at its approval, it is counted beside "Approvals".
    expect(await nav.getByRole('link', { name: /^Approvals( 1 waiting for you)?$/ }).count()).toBe(1);
    expect(await nav.getByRole('button', { name: 'Sign out' }).isVisible()).toBe(true);
    expect(await nav.textContent()).toContain(env.demo.adminEmail);
    const cookie = (await context.cookies()).find((c) => c.name === 'flowgate_session');
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/' });
    await expectAccessible(page);
    await shot(page, 'overview');
    await shot(page, 'overview', 'dark');

    // The cookie is no API credential.
    const viaCookie = await fetch(`${env.url}/api/auth/me`, { headers: { cookie: `flowgate_session=${cookie?.value}` } });
    expect(viaCookie.status).toBe(401);
    const v1ViaCookie = await fetch(`${env.url}/api/v1/executions`, { headers: { cookie: `flowgate_session=${cookie?.value}` } });
    expect(v1ViaCookie.status).toBe(401);

    // Sign out ends the session: the old cookie opens nothing.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL((u) => u.pathname === '/console/login');
    const replay = await fetch(`${env.url}/console`, { headers: { cookie: `flowgate_session=${cookie?.value}` }, redirect: 'manual' });
    expect(replay.status).toBe(303);
    expect(replay.headers.get('location')).toBe('/console/login?next=%2Fconsole');
    expectNoCspViolations(context);
    await context.close();
  });

  it("ends a member's browser session when an admin disables them: their next page asks them to sign in", async () => {
    const admin = await env.api('/api/auth/login', { json: { email: env.demo.adminEmail, password: env.demo.adminPassword }, auth: '' });
    const session = admin.body.token as string;
    const email = `member-${Date.now()}@demo.local`;
    const password = 'a long member password';
    const created = await env.api('/api/members', { auth: session, json: { email, password, role: 'member' } });
    expect(created.status).toBe(201);

    const context = await consoleContext(browser);
    const page = await context.newPage();
    await signIn(page, env.url, email, password);
    expect(await page.getByRole('navigation', { name: 'Console' }).textContent()).toContain(email);
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Runs', exact: true }).click();
    await page.waitForURL((u) => u.pathname === '/console/runs');

    const disabled = await env.api(`/api/members/${created.body.id}`, { method: 'PUT', auth: session, json: { disabled: true } });
    expect(disabled.status).toBe(200);
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Workflows', exact: true }).click();
    await page.waitForURL((u) => u.pathname === '/console/login');
    expect(new URL(page.url()).searchParams.get('next')).toBe('/console/workflows');
    // And signing in again is refused while disabled, with the same words as a wrong password.
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toBe('Email or password is wrong');
    expectNoCspViolations(context);
    await context.close();
  });

  it('sends a user back to console paths only (no open redirect)', async () => {
    const context = await consoleContext(browser);
    const page = await context.newPage();
    for (const next of [
      'https://evil.example/',
      '//evil.example/console',
      '/\\evil.example',
      '/api/v1/executions',
      'javascript:alert(1)',
    ]) {
      await page.goto(`${env.url}/console/login?${new URLSearchParams({ next })}`);
      await signIn(page, env.url, env.demo.adminEmail, env.demo.adminPassword);
      expect(new URL(page.url()).origin, next).toBe(env.url);
      expect(new URL(page.url()).pathname, next).toBe('/console');
      await context.clearCookies();
    }
    await context.close();
  });

  it('the CSP listener of these tests sees a violation (an inline script under the console CSP)', async () => {
    const context = await consoleContext(browser);
    const page = await context.newPage();
    await page.route(`${env.url}/console/csp-probe`, (route) =>
      route.fulfill({
        status: 200,
        headers: { 'content-type': 'text/html', 'content-security-policy': "default-src 'none'; script-src 'self'" },
        body: '<!doctype html><title>probe</title><script>document.title = "ran"</script>',
      }),
    );
    await page.goto(`${env.url}/console/csp-probe`);
    expect(await page.title()).toBe('probe');
    await expect
      .poll(() => {
        try {
          expectNoCspViolations(context);
          return 'none';
        } catch {
          return 'seen';
        }
      })
      .toBe('seen');
    await context.close();
  });

  it('serves assets by content hash, immutable for a year, compressed', async () => {
    const html = await (await fetch(`${env.url}/console/login`)).text();
    const hrefs = [...html.matchAll(/(?:href|src)="(\/console\/assets\/[^"]+)"/g)].map((m) => m[1] as string);
    expect(hrefs.length).toBe(4);
    for (const href of hrefs) {
      expect(href).toMatch(/\.[0-9a-f]{12}\.(css|js)$/);
      const res = await fetch(`${env.url}${href}`, { headers: { 'accept-encoding': 'gzip' } });
      expect(res.status).toBe(200);
      expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      expect(res.headers.get('content-type')).toMatch(/^text\/(css|javascript)/);
      expect((await res.text()).length).toBeGreaterThan(100);
    }
    const unknown = await fetch(`${env.url}/console/assets/pico.000000000000.css`);
    expect(unknown.status).toBe(404);
  });
});
