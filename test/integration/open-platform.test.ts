import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { flushCounts } from '../../shared/db/counters.ts';
import { handler as v1Me } from '../../functions/http/v1/me.ts';
import { db } from '../../shared/clients.ts';
import { resetConfig } from '../../shared/config.ts';
import { createKey } from '../../shared/domain/keys.ts';
import { givenAccount, PASSWORD } from '../support/fixtures.ts';
import { apiEvent, invoke } from '../support/http.ts';
import { capturedLogs } from '../support/logs.ts';
import { sessionOf } from '../support/sessions.ts';

const PRO_LIMIT = 5;
beforeAll(() => {
  process.env.RATE_LIMITS = JSON.stringify({ pro: PRO_LIMIT, free: 3 });
  resetConfig();
});
afterAll(() => {
  delete process.env.RATE_LIMITS;
  resetConfig();
});

const callV1 = (headers: Record<string, string>, query?: Record<string, string>) =>
  invoke(v1Me, apiEvent({ path: '/api/v1/me', headers, query }));

describe('open-platform credentials', () => {
  it('accepts a key as Bearer or X-API-Key, but not in the query on v1', async () => {
    const { memberKey, member } = await givenAccount();
    const ok = await callV1({ authorization: `Bearer ${memberKey.token}` });
    expect(ok.status).toBe(200);
    expect(ok.json).toMatchObject({ userId: member.userId, keyId: memberKey.id, plan: 'team' });
    expect((await callV1({ 'x-api-key': memberKey.token })).status).toBe(200);
    const query = await callV1({}, { api_key: memberKey.token });
    expect(query.status).toBe(401);
    expect(query.headers['www-authenticate']).toBe('Bearer');
  });

  it('evaluates only the first credential present: a bad Bearer is not rescued by a good X-API-Key', async () => {
    const { memberKey } = await givenAccount();
    const res = await callV1({ authorization: 'Bearer dyk_garbage', 'x-api-key': memberKey.token });
    expect(res.status).toBe(401);
    expect(res.json.code).toBe('INVALID_API_KEY');
    const basic = await callV1({ authorization: 'Basic Zm9vOmJhcg==', 'x-api-key': memberKey.token });
    expect(basic.status).toBe(401);
  });

  it('rejects malformed and mistyped keys without reading the database (one counter write per failure)', async () => {
    const { memberKey } = await givenAccount();
    // Counts earlier requests left pending are written at the end of a later one (counters.ts): not this test's reads.
    await flushCounts();
    let calls = 0;
    const failureCounts: string[] = [];
    const counter = (next: (a: unknown) => Promise<unknown>) => (args: { input: { Key?: { PK?: string } } }) => {
      const pk = args.input.Key?.PK ?? '';
      // The source address's failed-authentication count (auth-failures.ts) is the only call.
      if (pk.startsWith('AUTHFAIL#')) failureCounts.push(pk);
      else calls++;
      return next(args);
    };
    db().middlewareStack.add(counter as never, { step: 'initialize', name: 'countCalls' });
    try {
      const mistyped = `${memberKey.token.slice(0, 30)}${memberKey.token[30] === 'a' ? 'b' : 'a'}${memberKey.token.slice(31)}`;
      for (const token of ['nope', 'dyk_', mistyped, `${memberKey.token}x`, memberKey.token.replace('dyk_', 'dys_')]) {
        const res = await callV1({ authorization: `Bearer ${token}` });
        expect(res.status, token).toBe(401);
      }
      expect(calls).toBe(0);
      expect(failureCounts).toHaveLength(5);
      expect((await callV1({ authorization: `Bearer ${memberKey.token}` })).status).toBe(200);
      expect(failureCounts).toHaveLength(5);
      expect(calls).toBeGreaterThan(0);
    } finally {
      db().middlewareStack.remove('countCalls');
    }
  });

  it('answers 403 INSUFFICIENT_SCOPE on v1 for a key without the scope', async () => {
    const { member } = await givenAccount();
    const key = await createKey(
      { accountId: member.accountId, userId: member.userId },
      { name: 'trigger only', scopes: ['WEBHOOK_TRIGGER'], validityDays: 1 },
    );
    const res = await callV1({ authorization: `Bearer ${key.token}` });
    expect(res.status).toBe(403);
    expect(res.json.code).toBe('INSUFFICIENT_SCOPE');
  });
});

describe('per-account rate limit', () => {
  it('reports the budget on every response and answers 429 with Retry-After past it', async () => {
    const { memberKey, adminKey } = await givenAccount({ plan: 'pro' });
    const statuses: number[] = [];
    let last: Awaited<ReturnType<typeof callV1>> | undefined;
    for (let i = 0; i < PRO_LIMIT; i++) {
      last = await callV1({ authorization: `Bearer ${(i % 2 ? adminKey : memberKey).token}` });
      statuses.push(last.status);
      expect(last.headers['x-ratelimit-limit']).toBe(String(PRO_LIMIT));
      expect(last.headers['x-ratelimit-remaining']).toBe(String(PRO_LIMIT - i - 1));
    }
    expect(statuses).toEqual(Array(PRO_LIMIT).fill(200));
    const limited = await callV1({ authorization: `Bearer ${adminKey.token}` });
    expect(limited.status).toBe(429);
    expect(limited.json.code).toBe('RATE_LIMITED');
    const retryAfter = Number(limited.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(limited.headers['x-ratelimit-remaining']).toBe('0');
    expect(Number(limited.headers['x-ratelimit-reset'])).toBeGreaterThan(Date.now() / 1000);
    expect(limited.headers['ratelimit-policy']).toBe(`"account";q=${PRO_LIMIT};w=60`);
    expect(limited.headers.ratelimit).toMatch(/^"account";r=0;t=\d+$/);
  });

  it('never admits more than the limit under concurrency, and accounts do not share budgets', async () => {
    const a = await givenAccount({ plan: 'free' });
    const b = await givenAccount({ plan: 'free' });
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => callV1({ authorization: `Bearer ${(i % 2 ? a.adminKey : a.memberKey).token}` })),
    );
    expect(results.filter((r) => r.status === 200)).toHaveLength(3);
    expect(results.filter((r) => r.status === 429)).toHaveLength(17);
    expect((await callV1({ authorization: `Bearer ${b.memberKey.token}` })).status).toBe(200);
  });
});

describe('logs', () => {
  it('never contain keys, session tokens or passwords', async () => {
    const { admin, adminKey } = await givenAccount();
    let session = '';
    const out = await capturedLogs(async () => {
      session = await sessionOf(admin.email);
      await callV1({ authorization: `Bearer ${adminKey.token}` });
      await callV1({ 'x-api-key': adminKey.token }, { api_key: adminKey.token });
      await callV1({ authorization: `Bearer ${session}` });
    });
    expect(out).toContain('"message":"request"');
    expect(out).toContain('api_key=[redacted]');
    for (const secret of [adminKey.token, adminKey.token.split('_')[2] as string, PASSWORD, session]) expect(out).not.toContain(secret);
  });
});
