import { type ChildProcess, execSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, statfsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { freePort } from '../../infra/local/emulators.ts';
import { eventually } from '../support/engine.ts';
import { startLocalProcess } from '../support/local-process.ts';

// `npm start` as a person runs it: its own emulators on disk, the seed, Ctrl-C, and a restart.
const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

const start = (dataDir: string, port: number) => startLocalProcess(dataDir, port);

const stop = (child: ChildProcess, signal: NodeJS.Signals) =>
  new Promise<number | null>((resolve) => {
    child.once('exit', (code) => resolve(code));
    child.kill(signal);
  });

describe('npm start', () => {
  it('answers health only once seeded (demo.json written), seeds once, prints the demo credentials, survives a restart and stops every child on Ctrl-C', {
    timeout: 240_000,
  }, async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'flowgate-start-'));
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;

    const starting = start(dataDir, port);
    // A fast client: health from the first moment the port answers, then demo.json at once.
    const health = await eventually(
      () =>
        fetch(`${base}/api/health`).then(
          (r) => r.status,
          () => 0,
        ),
      (status) => status !== 0,
      90_000,
    );
    expect(health).toBe(200);
    expect(existsSync(join(dataDir, 'demo.json'))).toBe(true);
    const first = await starting;
    const demo = JSON.parse(readFileSync(join(dataDir, 'demo.json'), 'utf8'));
    expect(first.output()).toContain(demo.apiKey);
    expect(first.output()).toContain(demo.adminPassword);
    expect(first.output()).toContain('Schedules of the demo workflow: none');
    expect((await fetch(`${base}/api/health`)).status).toBe(200);

    // The printed curl, run as printed, starts a run that reaches the demo's approval step.
    const curl = first
      .output()
      .split('\n')
      .map((l) => l.trim())
      .find((l) => l.startsWith('curl') && l.includes('/trigger'));
    expect(curl).toBeDefined();
    const triggered = JSON.parse(execSync(curl as string, { encoding: 'utf8' }));
    expect(triggered).toMatchObject({ status: 'PENDING', webhookId: demo.webhookId, workflowId: demo.workflowId });
    const waiting = await eventually(
      async () =>
        (await (
          await fetch(`${base}/api/v1/executions/${triggered.executionId}`, { headers: { authorization: `Bearer ${demo.apiKey}` } })
        ).json()) as any,
      (e) => e.status === 'WAITING_APPROVAL',
    );
    expect(waiting.currentStepId).toBe('approve');

    // The printed one-click link line gives the link; the page asks, its form POST decides.
    const linkLine = first
      .output()
      .split('\n')
      .map((l) => l.trim())
      .find((l) => l.startsWith('echo') && l.includes('/approve?api_key='));
    const link = execSync(linkLine as string, { encoding: 'utf8', shell: '/bin/bash' }).trim();
    expect(link).toContain(`/api/webhook-trigger/approval/${waiting.approvalId}/approve?api_key=`);
    const page = await fetch(link);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('<form method="post"');
    // What the page's button sends: its form, with the page's own value (a POST without it is refused).
    const pageValue = /<input type="hidden" name="page" value="([^"]+)"\/?>/.exec(html)?.[1] as string;
    expect(pageValue).toBeTruthy();
    // The demo's approval asks for a ticket (required): without it the page says so and decides nothing.
    expect(html).toMatch(/<input[^>]*name="field\.ticket"[^>]*required/);
    const post = (fields: Record<string, string>) =>
      fetch(`${link}&confirm=1`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ page: pageValue, ...fields }).toString(),
      });
    const missing = await post({});
    expect(missing.status).toBe(400);
    expect(await missing.text()).toContain('<code>formData.ticket</code> is required');
    const decided = await post({ 'field.ticket': 'OPS-1' });
    expect(await decided.text()).toContain('Approved');
    const done = await eventually(
      async () =>
        (await (
          await fetch(`${base}/api/v1/executions/${triggered.executionId}`, { headers: { authorization: `Bearer ${demo.apiKey}` } })
        ).json()) as any,
      (e) => e.status === 'SUCCEEDED',
    );
    expect(done.steps.map((s: { status: string }) => s.status)).toEqual(['SUCCEEDED', 'SUCCEEDED', 'SUCCEEDED']);
    // The decision's audit entry went from the table's stream onto the local default bus, whose printed
    // address lists what was put (docs/local-mode.md "The audit stream").
    await eventually(
      async () => first.output(),
      (o) => o.includes('EventBridge (local default bus): put flowgate "Audit entry" approval.approved'),
    );
    const bus = /Audit entries put on EventBridge \(local default bus\): (http:\/\/\S+)/.exec(first.output())?.[1];
    const put = ((await (await fetch(bus as string)).json()) as { entries: { DetailType: string; Detail: string }[] }).entries;
    expect(
      put
        .filter((e) => e.DetailType === 'Audit entry' && JSON.parse(e.Detail).object?.id === waiting.approvalId)
        .map((e) => JSON.parse(e.Detail).action),
    ).toEqual(['approval.refused', 'approval.approved']);

    // Each emulator is a process of its own, recorded for the bench and the next start; DynamoDB
    // Local works on tmpfs where the machine has one.
    const state = JSON.parse(readFileSync(join(dataDir, 'emulators.json'), 'utf8'));
    expect(state.pids).toEqual({ dynamodb: state.javaPid, sqs: expect.any(Number), s3: expect.any(Number), ses: expect.any(Number) });
    const pids = Object.values(state.pids) as number[];
    for (const pid of pids) expect(isAlive(pid)).toBe(true);
    expect(readFileSync(`/proc/${state.pids.sqs}/cmdline`, 'utf8')).toContain('emulator-process.ts\0sqs');
    const tmpfs = existsSync('/dev/shm') && statfsSync('/dev/shm').type === 0x01021994;
    if (tmpfs) expect(existsSync(join(state.tmpfs.dir, 'shared-local-instance.db'))).toBe(true);
    expect(await stop(first.child, 'SIGINT')).toBe(0);
    await new Promise((r) => setTimeout(r, 500));
    for (const pid of pids) expect(isAlive(pid)).toBe(false);
    // A clean stop puts the database back in DATA_DIR and frees the tmpfs.
    expect(existsSync(join(dataDir, 'dynamodb', 'shared-local-instance.db'))).toBe(true);
    if (tmpfs) expect(existsSync(state.tmpfs.dir)).toBe(false);

    const second = await start(dataDir, port);
    try {
      expect(JSON.parse(readFileSync(join(dataDir, 'demo.json'), 'utf8')).accountId).toBe(demo.accountId);
      const login = await fetch(`${base}/api/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: demo.adminEmail, password: demo.adminPassword }),
      });
      expect(login.status).toBe(200);
      const me = await fetch(`${base}/api/v1/me`, { headers: { authorization: `Bearer ${demo.apiKey}` } });
      expect(me.status).toBe(200);
      expect(((await me.json()) as any).accountId).toBe(demo.accountId);
      expect(existsSync(join(dataDir, 'dynamodb', 'shared-local-instance.db'))).toBe(true);
    } finally {
      expect(await stop(second.child, 'SIGTERM')).toBe(0);
    }
  });
});
