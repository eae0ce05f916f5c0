import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { freePort } from '../../infra/local/emulators.ts';
import { startLocalProcess } from '../support/local-process.ts';
import { launchBrowser } from '../support/browser.ts';
import { expectAccessible, shot } from '../support/console-browser.ts';

/**
 * A new user's first minutes, without reading any docs: `npm start`, then the console address it
 * prints, in Chromium. The demo admin signs in with the printed password, sees the demo run waiting
 * for them, approves it on its approval page, and watches the run finish on its timeline.
 */
describe('the console on a fresh start', () => {
  it('from the printed address: sign in, the waiting demo run, approve it, the run finishes on its timeline', {
    timeout: 240_000,
  }, async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'flowgate-first-run-'));
    const started = await startLocalProcess(dataDir, await freePort(), { detached: true });
    const browser = await launchBrowser();
    try {
      const printed = started.output();
      const address = /console:\s+(http:\/\/\S+\/console)\b/.exec(printed)?.[1];
      const [, email, password] = /admin:\s+(\S+) \/ (\S+)/.exec(printed) ?? [];
      expect(address, printed).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/console$/);
      expect(email && password, printed).toBeTruthy();

      const page = await (await browser.newContext()).newPage();
      await page.goto(address as string);
      expect(new URL(page.url()).pathname).toBe('/console/login');
      await page.getByLabel('Email').fill(email as string);
      await page.getByLabel('Password').fill(password as string);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL((u) => u.pathname === '/console');

      // The demo run waits for the admin: the overview lists its approval (the seed started it a moment ago).
      const mine = page.getByRole('table', { name: 'Pending approvals for me, oldest first' });
      await expect
        .poll(
          async () => {
            await page.reload();
            return mine.getByRole('link', { name: 'Deploy to production' }).count();
          },
          { timeout: 60_000, interval: 1000 },
        )
        .toBe(1);
      await mine.getByRole('link', { name: 'Deploy to production' }).click();
      await page.waitForURL((u) => u.pathname.startsWith('/console/approvals/'));
      await expectAccessible(page);

      // Its form asks for a ticket; approve with one and a comment.
      await page.getByLabel('ticket').fill('CHG-1042');
      await page.getByLabel('Comment').fill('Looks good');
      await page.getByRole('button', { name: 'Approve' }).click();
      await expect.poll(() => page.getByText('APPROVED').count()).toBeGreaterThan(0);

      // Its run, from the approval's page: it finishes, and its timeline shows every step.
      await page.getByRole('link', { name: /^ex_/ }).first().click();
      await page.waitForURL((u) => u.pathname.startsWith('/console/runs/'));
      await expect
        .poll(
          async () => {
            await page.reload();
            return page.getByText('SUCCEEDED', { exact: true }).first().isVisible();
          },
          { timeout: 60_000, interval: 1000 },
        )
        .toBe(true);
      const timeline = page.getByRole('img', { name: /^Timeline of run ex_/ });
      const titles = await timeline.evaluate((svg) => Array.from(svg.querySelectorAll('title'), (t) => t.textContent ?? ''));
      for (const step of ['prepare', 'approve', 'report'])
        expect(
          titles.some((t) => t.includes(step)),
          `${step} in ${titles}`,
        ).toBe(true);
      await expectAccessible(page);
      await shot(page, 'first-run-timeline');
    } finally {
      await browser.close();
      started.child.kill('SIGINT');
      await new Promise((r) => started.child.once('exit', r));
    }
  });
});
