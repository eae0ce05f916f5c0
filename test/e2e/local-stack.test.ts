import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes.ts';
import { isConsolePage } from '../../shared/http/route.ts';
import { localStackOnSharedEmulators } from '../support/local-stack.ts';

// The local server over HTTP, in this process, against the run's emulators.
let stack: Awaited<ReturnType<typeof localStackOnSharedEmulators>>['stack'];
let dataDir: string;
beforeAll(async () => {
  ({ stack, dataDir } = await localStackOnSharedEmulators('e2e', { seed: true }));
});
afterAll(() => stack?.stop());

const call = (path: string, init: RequestInit & { json?: unknown } = {}) =>
  fetch(`${stack.url}${path}`, {
    ...init,
    headers: { ...(init.json !== undefined ? { 'content-type': 'application/json' } : {}), ...(init.headers as Record<string, string>) },
    body: init.json !== undefined ? JSON.stringify(init.json) : init.body,
  });

describe('local stack over HTTP', () => {
  it('is healthy, seeded, and writes demo.json', async () => {
    const health = await call('/api/health');
    expect(health.status).toBe(200);
    expect((await health.json()) as any).toMatchObject({ status: 'ok' });
    const demo = JSON.parse(readFileSync(join(dataDir, 'demo.json'), 'utf8'));
    expect(demo).toMatchObject({ baseUrl: stack.url, accountId: expect.stringMatching(/^acc_/), adminEmail: expect.any(String) });
    expect(demo.apiKey).toMatch(/^dyk_/);
    expect(Object.keys(demo).sort()).toEqual(['accountId', 'adminEmail', 'adminPassword', 'apiKey', 'baseUrl', 'webhookId', 'workflowId']);
    expect(demo.workflowId).toMatch(/^wf_/);
  });

  it("mails the demo's approval to its admin through the SES emulator", async () => {
    const demo = JSON.parse(readFileSync(join(dataDir, 'demo.json'), 'utf8'));
    expect(stack.mailViewer).toBe(process.env.AWS_ENDPOINT_URL_SESV2);
    const started = await call(`/api/v1/workflows/${demo.workflowId}/runs`, {
      method: 'POST',
      headers: { authorization: `Bearer ${demo.apiKey}` },
      json: { variables: { env: 'production' } },
    });
    expect(started.status).toBe(202);
    const deadline = Date.now() + 30_000;
    type Mail = { destination: { to: string[] }; subject: string; body: { text: string } };
    let mail: Mail | undefined;
    while (!mail && Date.now() < deadline) {
      const store = (await (await fetch(`${stack.mailViewer}/store`)).json()) as { emails: Mail[] };
      mail = store.emails.find((m) => m.destination.to.includes(demo.adminEmail));
      if (!mail) await new Promise((r) => setTimeout(r, 200));
    }
    expect(mail?.subject).toBe('Approval needed: Deploy to production');
    expect(mail?.body.text).toContain('Workflow: Deploy with approval');
  });

  it('login → create key → authenticated v1 call → revoke → 401', async () => {
    const demo = JSON.parse(readFileSync(join(dataDir, 'demo.json'), 'utf8'));
    const login = await call('/api/auth/login', { method: 'POST', json: { email: demo.adminEmail, password: demo.adminPassword } });
    expect(login.status).toBe(200);
    const { token: session } = (await login.json()) as any;
    const auth = { authorization: `Bearer ${session}` };

    const created = await call('/api/keys', {
      method: 'POST',
      headers: auth,
      json: { name: 'e2e', scopes: ['WORKFLOW_READ'], validityDays: 3 },
    });
    expect(created.status).toBe(201);
    const key = (await created.json()) as any;

    const v1 = await call('/api/v1/me', { headers: { authorization: `Bearer ${key.token}` } });
    expect(v1.status).toBe(200);
    expect(v1.headers.get('x-ratelimit-limit')).toBe('3000');
    expect(await v1.json()).toMatchObject({ keyId: key.id, accountId: demo.accountId, plan: 'team' });

    expect((await call(`/api/keys/${key.id}`, { method: 'DELETE', headers: auth })).status).toBe(204);
    const after = await call('/api/v1/me', { headers: { authorization: `Bearer ${key.token}` } });
    expect(after.status).toBe(401);
    expect(after.headers.get('content-type')).toBe('application/problem+json');
    expect(((await after.json()) as any).code).toBe('INVALID_API_KEY');
  });

  it('mounts every route of the route table, each with X-Request-Id', async () => {
    for (const r of routes) {
      const path = r.path.replace(/\{[^}]+\}/g, '01jzzzzzzzzzzzzzzzzzzzzzzz');
      const res = await call(path, { method: r.method });
      const body = await res.text();
      expect(res.headers.get('x-request-id'), `${r.method} ${r.path}`).toMatch(/^[0-9a-f-]{36}$/);
      // The fallback answers unmatched requests with "No such endpoint"; a mounted route never does.
      expect(body, `${r.method} ${r.path}`).not.toContain('No such endpoint');
      expect(res.status, `${r.method} ${r.path}`).toBeLessThan(500);
    }
  });

  it('answers unknown paths 404 and known paths with the wrong method 405, as problem+json', async () => {
    const missing = await call('/api/nothing-here');
    expect(missing.status).toBe(404);
    expect(missing.headers.get('content-type')).toBe('application/problem+json');
    const wrong = await call('/api/health', { method: 'DELETE' });
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('allow')).toBe('GET');
    expect(((await wrong.json()) as any).code).toBe('METHOD_NOT_ALLOWED');
  });

  it('measures body limits in bytes and keeps raw bytes of non-text bodies', async () => {
    // 4,096-byte limit on login: 1,400 three-byte characters are 4,200 bytes but only 1,400 characters.
    const big = await call('/api/auth/login', { method: 'POST', json: { email: '€'.repeat(1400), password: 'x' } });
    expect(big.status).toBe(413);
    expect(((await big.json()) as any).code).toBe('PAYLOAD_TOO_LARGE');
    const binary = await call('/api/auth/login', {
      method: 'POST',
      headers: { 'content-type': 'application/octet-stream' },
      body: new Uint8Array([0xff, 0xfe, 0x00, 0x01]),
    });
    expect(binary.status).toBe(415);
    const notJson = await call('/api/auth/login', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"email":' });
    expect(notJson.status).toBe(400);
    expect(((await notJson.json()) as any).code).toBe('INVALID_JSON');
  });

  it("serves an OpenAPI 3.1 document listing every route of the API (the console's pages are not the API)", async () => {
    const doc = (await (await call('/api/v1/openapi.json')).json()) as any;
    expect(doc.openapi).toBe('3.1.0');
    for (const r of routes.filter((r) => !isConsolePage(r)))
      expect(doc.paths[r.path]?.[r.method.toLowerCase()], `${r.method} ${r.path}`).toBeDefined();
  });
});
