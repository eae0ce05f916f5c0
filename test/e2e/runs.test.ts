import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localStackOnSharedEmulators } from '../support/local-stack.ts';
import { getApproval } from '../../shared/db/entities/approval.ts';
import { eventually, resumeAfterDecision } from '../support/engine.ts';

// Runs over HTTP on the local stack (server, poller, worker, emulators), with the seeded demo.
let stack: Awaited<ReturnType<typeof localStackOnSharedEmulators>>['stack'];
let demo: { apiKey: string; workflowId: string; accountId: string; adminEmail: string; adminPassword: string };
beforeAll(async () => {
  const started = await localStackOnSharedEmulators('runs', { seed: true });
  stack = started.stack;
  const dataDir = started.dataDir;
  demo = JSON.parse(readFileSync(join(dataDir, 'demo.json'), 'utf8'));
});
afterAll(() => stack?.stop());

const api = async (path: string, init: { method?: string; json?: unknown; headers?: Record<string, string>; key?: string } = {}) => {
  const res = await fetch(`${stack.url}${path}`, {
    method: init.method ?? (init.json !== undefined ? 'POST' : 'GET'),
    redirect: 'manual',
    headers: {
      authorization: `Bearer ${init.key ?? demo.apiKey}`,
      ...(init.json !== undefined ? { 'content-type': 'application/json' } : {}),
      ...init.headers,
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
  return { status: res.status, headers: res.headers, body };
};

async function consoleSession() {
  const res = await api('/api/auth/login', {
    json: { email: demo.adminEmail, password: demo.adminPassword },
    headers: { authorization: '' },
  });
  return res.body.token as string;
}

describe('runs over the v1 API on the local stack', () => {
  it('a run of a set → artifact workflow reaches SUCCEEDED; result, events and the artifact bytes are readable', async () => {
    const session = await consoleSession();
    const created = await api('/api/workflows', {
      key: session,
      json: {
        name: 'report',
        definition: {
          variables: { who: { type: 'string', default: 'world' } },
          steps: [
            { id: 'greet', type: 'set', values: { greeting: "{% 'héllo ' & $vars.who %}" } },
            { id: 'file', type: 'artifact', name: 'greeting.txt', content: '{% $vars.greeting %}' },
          ],
          output: '{% { "greeting": $vars.greeting } %}',
        },
      },
    });
    expect(created.status).toBe(201);
    const start = await api(`/api/v1/workflows/${created.body.id}/runs`, { json: { variables: { who: 'Ada' } } });
    expect(start.status).toBe(202);
    expect(start.headers.get('location')).toBe(`/api/v1/executions/${start.body.executionId}`);
    expect(start.body).toMatchObject({ status: 'PENDING', trigger: 'api', variables: { who: 'Ada' } });
    expect(start.body).not.toHaveProperty('definition');

    const id = start.body.executionId;
    const done = await eventually(
      () => api(`/api/v1/executions/${id}`),
      (r) => ['SUCCEEDED', 'FAILED'].includes(r.body.status),
    );
    expect(done.body.status).toBe('SUCCEEDED');
    expect((await api(`/api/v1/executions/${id}/result`)).body).toMatchObject({ status: 'SUCCEEDED', output: { greeting: 'héllo Ada' } });
    const events = await api(`/api/v1/executions/${id}/events?limit=2`);
    expect(events.body.items.map((e: { type: string }) => e.type)).toEqual(['execution.started', 'step.started']);
    const rest = await api(`/api/v1/executions/${id}/events?limit=100&cursor=${encodeURIComponent(events.body.nextCursor)}`);
    expect(rest.body.items.at(-1).type).toBe('execution.succeeded');

    const artifacts = await api(`/api/v1/executions/${id}/artifacts`);
    expect(artifacts.body.items).toEqual([
      expect.objectContaining({ name: 'greeting.txt', size: Buffer.byteLength('héllo Ada'), stepId: 'file' }),
    ]);
    const artifactId = artifacts.body.items[0].artifactId;
    const link = await api(`/api/v1/executions/${id}/artifacts/${artifactId}/download`);
    expect(link.body.expiresAt).toBeGreaterThan(Date.now() + 4 * 60_000);
    const file = await fetch(link.body.url);
    expect(Buffer.from(await file.arrayBuffer())).toEqual(Buffer.from('héllo Ada', 'utf8'));
    expect(file.headers.get('content-disposition')).toMatch(/^attachment; filename="greeting.txt"/);
    const redirect = await api(`/api/v1/executions/${id}/artifacts/${artifactId}/download?redirect=1`);
    expect(redirect.status).toBe(302);
    expect(redirect.headers.get('location')).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/artifacts\//);
  });

  it('the demo workflow waits for approval with a PENDING approval record, resumes, and can be cancelled from each state', async () => {
    const start = await api(`/api/v1/workflows/${demo.workflowId}/runs`, { json: { variables: { env: 'production' } } });
    const id = start.body.executionId;
    const waiting = await eventually(
      () => api(`/api/v1/executions/${id}`),
      (r) => r.body.status === 'WAITING_APPROVAL',
    );
    expect(waiting.body.currentStepId).toBe('approve');
    const approval = await getApproval(demo.accountId, waiting.body.approvalId);
    expect(approval).toMatchObject({ status: 'PENDING', title: 'Deploy to production' });
    expect((await api(`/api/v1/executions/${id}/result`)).status).toBe(409);

    await resumeAfterDecision(demo.accountId, id, waiting.body.approvalId, {
      decision: 'approve',
      decidedBy: 'usr_test',
      formData: { ticket: 'CHG-7' },
    });
    const done = await eventually(
      () => api(`/api/v1/executions/${id}`),
      (r) => r.body.status === 'SUCCEEDED',
    );
    expect(done.body.variables).toMatchObject({ ticket: 'CHG-7' });

    // Cancel from WAITING_APPROVAL, and 409 once finished.
    const second = await api(`/api/v1/workflows/${demo.workflowId}/runs`, { json: {} });
    await eventually(
      () => api(`/api/v1/executions/${second.body.executionId}`),
      (r) => r.body.status === 'WAITING_APPROVAL',
    );
    const cancelled = await api(`/api/v1/executions/${second.body.executionId}/cancel`, { json: { reason: 'changed my mind' } });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({ status: 'CANCELLED', error: { code: 'CANCELLED' } });
    const again = await api(`/api/v1/executions/${second.body.executionId}/cancel`, { method: 'POST' });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('EXECUTION_FINISHED');
  });

  it('lists executions newest first with filters and signed cursors bound to their query', async () => {
    const a = await api(`/api/v1/workflows/${demo.workflowId}/runs`, { json: {} });
    const b = await api(`/api/v1/workflows/${demo.workflowId}/runs`, { json: {} });
    const page1 = await api(`/api/v1/executions?workflowId=${demo.workflowId}&limit=1`);
    expect(page1.body.items?.[0]?.executionId, JSON.stringify(page1.body)).toBe(b.body.executionId);
    const page2 = await api(`/api/v1/executions?workflowId=${demo.workflowId}&limit=1&cursor=${encodeURIComponent(page1.body.nextCursor)}`);
    expect(page2.body.items[0].executionId).toBe(a.body.executionId);
    const foreign = await api(`/api/v1/executions?limit=1&cursor=${encodeURIComponent(page1.body.nextCursor)}`);
    expect(foreign.status).toBe(400);
    expect(foreign.body.code).toBe('INVALID_CURSOR');
    const tampered = await api(
      `/api/v1/executions?workflowId=${demo.workflowId}&limit=1&cursor=${encodeURIComponent(`x${page1.body.nextCursor}`)}`,
    );
    expect(tampered.body.code).toBe('INVALID_CURSOR');
    const bad = await api('/api/v1/executions?status=DONE&limit=500');
    expect(bad.status).toBe(400);
    expect(bad.body.errors.map((e: { path: string }) => e.path).sort()).toEqual(['limit', 'status']);
  });
});
