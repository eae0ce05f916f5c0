import { afterEach, describe, expect, it } from 'vitest';
import { handler as health } from '../../functions/http/health/get.ts';
import { handler as me } from '../../functions/http/v1/me.ts';
import { resetConfig } from '../../shared/config.ts';
import { highVolume } from '../../shared/http/middleware/request-log.ts';
import { routes } from '../../functions/routes.ts';
import { givenAccount } from '../support/fixtures.ts';
import { apiEvent, bearer, invoke } from '../support/http.ts';
import { capturedLogs } from '../support/logs.ts';

// REQUEST_LOG_SAMPLE (issue 32, item 6): a high-volume route's successful requests are logged at
// that rate; refusals, errors and every other route always are. The answer is the same either way.

const requestLines = (out: string) =>
  out
    .split('\n')
    .filter((l) => l.includes('"message":"request"'))
    .map((l) => JSON.parse(l));

afterEach(() => {
  delete process.env.REQUEST_LOG_SAMPLE;
  resetConfig();
});

describe('access log sampling', () => {
  it('names the webhook triggers and the v1 reads as high-volume, and nothing else', () => {
    const high = routes.filter(highVolume).map((r) => `${r.method} ${r.path}`);
    expect(high).toEqual(expect.arrayContaining(['GET /api/v1/me', 'GET /api/v1/executions', 'POST /api/webhook-trigger/{webhookId}']));
    expect(high.filter((r) => !r.startsWith('GET /api/v1/')).sort()).toEqual([
      'POST /api/webhook-trigger/{webhookId}',
      'POST /api/webhooks/{webhookId}/trigger',
    ]);
  });

  it('at 0 logs no successful v1 read, but every refusal, and every request of other routes', async () => {
    const a = await givenAccount();
    process.env.REQUEST_LOG_SAMPLE = '0';
    resetConfig();
    let answers: number[] = [];
    const out = await capturedLogs(async () => {
      answers = [
        (await invoke(me, apiEvent({ path: '/api/v1/me', headers: bearer(a.adminKey.token) }))).status,
        (await invoke(me, apiEvent({ path: '/api/v1/me', headers: bearer('fgk_not-a-key') }))).status,
        (await invoke(health, apiEvent({ path: '/api/health' }))).status,
      ];
    });
    expect(answers).toEqual([200, 401, 200]);
    expect(requestLines(out).map((l) => [l.path, l.status])).toEqual([
      ['/api/v1/me', 401],
      ['/api/health', 200],
    ]);
  });

  it('at 1 (the default) logs every request, with its request id', async () => {
    const a = await givenAccount();
    const out = await capturedLogs(async () => {
      const res = await invoke(me, apiEvent({ path: '/api/v1/me', headers: bearer(a.adminKey.token) }));
      expect(res.status).toBe(200);
    });
    const [line] = requestLines(out);
    expect(line).toMatchObject({ path: '/api/v1/me', status: 200, requestId: expect.any(String) });
  });
});
