// `npm run screenshots`: the console's main pages, light and dark, as PNGs in docs/screenshots/ (the
// README shows them). A local stack of its own (emulators in a temporary folder, the demo seeded),
// a few runs of the demo workflow (one approved, one rejected, one left waiting), then Chromium.
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Page } from 'playwright-core';
import { startLocalStack } from '../infra/local/stack.ts';
import { launchBrowser } from './support/browser.ts';

const OUT = resolve(import.meta.dirname, '../docs/screenshots');
const dataDir = mkdtempSync(join(tmpdir(), 'flowgate-screenshots-'));
const stack = await startLocalStack({ host: '127.0.0.1', port: 0, dataDir, seed: true });
const demo = JSON.parse(readFileSync(join(dataDir, 'demo.json'), 'utf8')) as {
  apiKey: string;
  webhookId: string;
  workflowId: string;
  adminEmail: string;
  adminPassword: string;
};

const api = async (path: string, json?: unknown) => {
  const res = await fetch(`${stack.url}${path}`, {
    method: json === undefined ? 'GET' : 'POST',
    headers: { authorization: `Bearer ${demo.apiKey}`, 'content-type': 'application/json' },
    body: json === undefined ? undefined : JSON.stringify(json),
  });
  return (await res.json()) as any;
};
const until = async <T>(read: () => Promise<T>, done: (v: T) => boolean) => {
  for (let i = 0; i < 300; i++) {
    const v = await read();
    if (done(v)) return v;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error('timed out');
};
const pending = () =>
  until(
    () => api('/api/v1/approvals'),
    (r) => (r.items ?? []).length > 0,
  );

try {
  // Three more runs of the demo: approved, rejected and one left waiting beside the seeded one.
  for (const [env, decision] of [
    ['staging', 'approve'],
    ['production', 'reject'],
    ['qa', undefined],
  ] as const) {
    const run = await api(`/api/webhooks/${demo.webhookId}/trigger`, { env });
    const approvals = await until(
      () => api('/api/v1/approvals'),
      (r) => (r.items ?? []).some((a: { executionId: string }) => a.executionId === run.executionId),
    );
    const approval = approvals.items.find((a: { executionId: string }) => a.executionId === run.executionId);
    if (decision) {
      const body = {
        comment: decision === 'approve' ? 'Approved for the screenshots' : 'Rejected for the screenshots',
        ...(decision === 'approve' ? { formData: { ticket: 'CHG-1042' } } : {}),
      };
      const decided = await api(`/api/v1/approvals/${approval.approvalId}/${decision}`, body);
      if (decided.status !== (decision === 'approve' ? 'APPROVED' : 'REJECTED')) throw new Error(JSON.stringify(decided));
      await until(
        () => api(`/api/v1/executions/${run.executionId}`),
        (r) => r.status === 'SUCCEEDED' || r.status === 'FAILED',
      );
    }
  }
  await pending();

  mkdirSync(OUT, { recursive: true });
  const browser = await launchBrowser();
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
  await page.goto(`${stack.url}/console/login`);
  await page.getByLabel('Email').fill(demo.adminEmail);
  await page.getByLabel('Password').fill(demo.adminPassword);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL((u) => u.pathname === '/console');

  const shoot = async (p: Page, name: string) => {
    for (const scheme of ['light', 'dark'] as const) {
      await p.emulateMedia({ colorScheme: scheme });
      // Pico's colours ease in (transitions of 0.2 s): the shot waits until they have.
      await p.waitForTimeout(400);
      await p.screenshot({ path: join(OUT, `${name}-${scheme}.png`), fullPage: true });
    }
    console.log(`docs/screenshots/${name}-{light,dark}.png`);
  };
  const runs = await api('/api/v1/executions');
  const finished = runs.items.find((r: { status: string }) => r.status === 'SUCCEEDED');
  if (!finished) throw new Error('no finished run to show');
  const waiting = (await pending()).items[0];
  for (const [name, path] of [
    ['overview', '/console'],
    ['runs', '/console/runs'],
    ['run-timeline', `/console/runs/${finished.executionId}`],
    ['approvals', '/console/approvals'],
    ['approval', `/console/approvals/${waiting.approvalId}`],
    ['workflows', '/console/workflows'],
    ['workflow', `/console/workflows/${demo.workflowId}`],
    ['editor', `/console/workflows/${demo.workflowId}/edit`],
    ['webhook', `/console/webhooks/${demo.webhookId}`],
    ['schedules', '/console/schedules'],
    ['keys', '/console/keys'],
    ['audit', '/console/audit'],
  ] as const) {
    const res = await page.goto(`${stack.url}${path}${path === '/console' || path.startsWith('/console/runs') ? '?live=0' : ''}`);
    if (!res?.ok()) throw new Error(`${path}: ${res?.status()}`);
    await shoot(page, name);
  }
  await browser.close();
} finally {
  await stack.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
