import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { eventually } from '../support/engine.ts';
import { freeStackPort, startLocalProcess } from '../support/local-process.ts';

// The spec's restart row, for real: `npm start`'s stack is killed with SIGKILL while a webhook run is
// in the middle of an http_request and another waits for approval, then started again on its data.

/** The http_request target: counts calls; holds them open while `hold` is set (a step in progress). */
const calls: ServerResponse[] = [];
let hold = true;
const target = createServer((_req, res) => {
  calls.push(res);
  if (!hold) res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
});

// Its own process group, so that SIGKILL takes tsx, node and the emulators' children at once.
const start = async (dataDir: string, port: number) =>
  (await startLocalProcess(dataDir, port, { env: { HTTP_STEP_ALLOWLIST: '127.0.0.1/32' }, detached: true })).child;

const killed = (child: ChildProcess, signal: NodeJS.Signals, group: boolean) =>
  new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    if (group) process.kill(-(child.pid as number), signal);
    else child.kill(signal);
  });

afterAll(() => {
  for (const res of calls) res.destroy();
  target.close();
});

describe('a restart of the local stack', () => {
  it('leaves webhook runs in progress INTERRUPTED (no step twice, nothing lost), API and finished runs as they were', {
    timeout: 300_000,
  }, async () => {
    await new Promise<void>((r) => target.listen(0, '127.0.0.1', r));
    const targetUrl = `http://127.0.0.1:${(target.address() as { port: number }).port}/call`;
    const dataDir = mkdtempSync(join(tmpdir(), 'flowgate-restart-'));
    const port = await freeStackPort();
    const base = `http://127.0.0.1:${port}`;

    let stack = await start(dataDir, port);
    try {
      const demo = JSON.parse(readFileSync(join(dataDir, 'demo.json'), 'utf8'));
      const api = async (path: string, init: { method?: string; body?: unknown; token?: string } = {}) => {
        const res = await fetch(`${base}${path}`, {
          method: init.method ?? 'GET',
          headers: { authorization: `Bearer ${init.token ?? demo.apiKey}`, ...(init.body ? { 'content-type': 'application/json' } : {}) },
          ...(init.body ? { body: JSON.stringify(init.body) } : {}),
        });
        return { status: res.status, json: (await res.json()) as any };
      };
      const run = async (id: string) => (await api(`/api/v1/executions/${id}`)).json;
      const until = (id: string, status: string) =>
        eventually(
          () => run(id),
          (e) => e.status === status,
          30_000,
        );

      // A workflow whose http_request step is held open by the target, behind an open webhook.
      const { token: session } = (
        await api('/api/auth/login', { method: 'POST', body: { email: demo.adminEmail, password: demo.adminPassword } })
      ).json;
      const definition = {
        steps: [
          { id: 'call', type: 'http_request', url: targetUrl, timeoutMs: 30_000 },
          { id: 'after', type: 'set', values: { called: true } },
        ],
      };
      const workflow = await api('/api/workflows', { method: 'POST', token: session, body: { name: 'slow call', definition } });
      expect(workflow.status, JSON.stringify(workflow.json)).toBe(201);
      const webhook = await api('/api/webhooks', {
        method: 'POST',
        token: session,
        body: { workflowId: workflow.json.id, name: 'slow', authMode: 'open' },
      });
      expect(webhook.status, JSON.stringify(webhook.json)).toBe(201);
      expect(webhook.json.authMode).toBe('open');
      const trigger = async (webhookId: string, body: object) => {
        const res = await api(`/api/webhooks/${webhookId}/trigger`, { method: 'POST', body });
        expect(res.status, JSON.stringify(res.json)).toBe(200);
        return res.json;
      };

      // A finished webhook run: the demo's, approved.
      const finished = await trigger(demo.webhookId, { env: 'finished' });
      const finishedWaiting = await until(finished.executionId, 'WAITING_APPROVAL');
      const approve = (approvalId: string) =>
        api('/api/webhook-trigger/approval', { method: 'POST', body: { approvalId, decision: 'approve' } });
      expect((await approve(finishedWaiting.approvalId)).status).toBe(200);
      const finishedBefore = await until(finished.executionId, 'SUCCEEDED');
      // A webhook run waiting for approval, an API run waiting for approval, a webhook run mid-request.
      const waiting = await trigger(demo.webhookId, { env: 'waiting' });
      const waitingBefore = await until(waiting.executionId, 'WAITING_APPROVAL');
      const apiRun = (await api(`/api/v1/workflows/${demo.workflowId}/runs`, { method: 'POST', body: { variables: { env: 'api' } } })).json;
      const apiBefore = await until(apiRun.executionId, 'WAITING_APPROVAL');
      const running = await trigger(webhook.json.id, { order: 7 });
      await eventually(
        async () => ({ calls: calls.length, run: await run(running.executionId) }),
        (x) => x.calls === 1,
      );
      expect((await run(running.executionId)).status).toBe('RUNNING');

      await killed(stack, 'SIGKILL', true);
      for (const res of calls) res.destroy();
      stack = await start(dataDir, port);

      // Both webhook runs are INTERRUPTED (restart), with their request kept and one event saying so.
      for (const [id, from] of [
        [running.executionId, 'RUNNING'],
        [waiting.executionId, 'WAITING_APPROVAL'],
      ]) {
        const e = await run(id as string);
        expect(e).toMatchObject({ status: 'INTERRUPTED', interruptReason: 'restart', interruptedAt: expect.any(Number) });
        const log = (await api(`/api/v1/executions/${id}/events`)).json.items;
        expect(log.filter((ev: { type: string }) => ev.type === 'execution.interrupted')).toEqual([
          expect.objectContaining({ data: expect.objectContaining({ reason: 'restart', from }) }),
        ]);
      }
      expect(await run(running.executionId)).toMatchObject({
        currentStepId: 'call',
        steps: [{ status: 'PENDING' }, { status: 'PENDING' }],
      });
      expect(await run(waiting.executionId)).toMatchObject({ currentStepId: 'approve', approvalId: waitingBefore.approvalId });
      // The API run and the finished run are exactly as they were.
      expect(await run(apiRun.executionId)).toEqual(apiBefore);
      expect(await run(finished.executionId)).toEqual(finishedBefore);
      // No replay: the workers are up, and the held request is not sent again.
      await new Promise((r) => setTimeout(r, 3_000));
      expect(calls).toHaveLength(1);
      expect((await run(running.executionId)).status).toBe('INTERRUPTED');

      // The interrupted run's approval is still pending and listed; a decision is recorded (200) but moves nothing.
      const pending = (await api('/api/v1/approvals')).json.items.map((a: { approvalId: string }) => a.approvalId);
      expect(pending).toEqual(expect.arrayContaining([waitingBefore.approvalId, apiBefore.approvalId]));
      expect((await approve(waitingBefore.approvalId)).status).toBe(200);
      expect((await api(`/api/v1/approvals/${waitingBefore.approvalId}`)).json.status).toBe('APPROVED');
      await new Promise((r) => setTimeout(r, 1_000));
      expect((await run(waiting.executionId)).status).toBe('INTERRUPTED');
      // The API run continues as usual.
      expect((await approve(apiBefore.approvalId)).status).toBe(200);
      await until(apiRun.executionId, 'SUCCEEDED');

      // A person handles the interrupted runs: resume takes the decision made meanwhile; the call is made once more.
      expect((await api(`/api/v1/executions/${waiting.executionId}/resume`, { method: 'POST' })).status).toBe(200);
      await until(waiting.executionId, 'SUCCEEDED');
      hold = false;
      expect((await api(`/api/v1/executions/${running.executionId}/resume`, { method: 'POST' })).status).toBe(200);
      expect((await until(running.executionId, 'SUCCEEDED')).variables).toMatchObject({ order: 7, called: true });
      expect(calls).toHaveLength(2);
      const rerun = await api(`/api/v1/executions/${running.executionId}/rerun`, { method: 'POST' });
      expect(rerun.status).toBe(202);
      expect(rerun.json).toMatchObject({ trigger: 'rerun', rerunOf: running.executionId, variables: { order: 7 } });
      await until(rerun.json.executionId, 'SUCCEEDED');
      expect(calls).toHaveLength(3);
    } finally {
      await killed(stack, 'SIGTERM', false);
    }
  });
});
